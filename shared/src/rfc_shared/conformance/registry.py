"""Snapshot and restore the process-global device registries.

Registrations are process-global, and a test that leaks one changes what the
next test sees (a recurring review complaint upstream). The snapshot is taken
only of modules already imported: nothing is imported to take it.

What stock torch keeps is listed here; what a slice's patches add, each
applied slice declares (:class:`~rfc_shared.overlay.slices.ProcessState`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from rfc_shared.overlay.slices import ProcessState


_DEVICE_INTERFACE = "torch._dynamo.device_interface"

# (module, attribute, value it has right after import)
_STATE: tuple[tuple[str, str, Any], ...] = (
    (_DEVICE_INTERFACE, "device_interfaces", {}),
    (_DEVICE_INTERFACE, "_device_initialized", False),
)


def _declared() -> list[ProcessState]:
    """What the applied slices declare they keep process-wide."""
    from rfc_shared import overlay

    active = overlay.active()
    return [state for s in active.slices for state in s.process_state] if active else []


def _saved_state() -> list[tuple[str, str, Any]]:
    declared = [(d.module, attr, initial) for d in _declared() for attr, initial in d.values]
    return [*_STATE, *declared]


# functools caches derived from the registry.
_DERIVED_CACHES: tuple[tuple[str, str], ...] = (
    ("torch._inductor.utils", "get_gpu_type"),
    # Cached per device: an interface replaced by a test must be asked again.
    ("torch._inductor.runtime.hints", "DeviceProperties.create"),
    ("torch._dynamo.variables.user_defined", "UserDefinedClassVariable._in_graph_classes"),
)


def _resolve(module: Any, dotted: str) -> Any:
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part, None)
    return obj


@dataclass
class RegistrySnapshot:
    saved: dict[tuple[str, str], Any] = field(default_factory=dict)

    @classmethod
    def take(cls) -> RegistrySnapshot:
        snapshot = cls()
        for module_name, attr, _ in _saved_state():
            module = sys.modules.get(module_name)
            if module is not None and hasattr(module, attr):  # absent: slice not applied
                value = getattr(module, attr)
                snapshot.saved[module_name, attr] = (
                    dict(value) if isinstance(value, dict) else value
                )
        return snapshot

    def restore(self) -> None:
        for module_name, attr, initial in _saved_state():
            module = sys.modules.get(module_name)
            if module is None or not hasattr(module, attr):
                continue
            value = self.saved.get((module_name, attr), initial)
            current = getattr(module, attr)
            if isinstance(current, dict):
                # In place: other modules hold references to the same dict.
                current.clear()
                current.update(value)
            else:
                setattr(module, attr, value)
        clear_derived_caches()


def clear_derived_caches() -> None:
    for module_name, dotted in _DERIVED_CACHES:
        module = sys.modules.get(module_name)
        cache = _resolve(module, dotted) if module is not None else None
        if cache is not None and hasattr(cache, "cache_clear"):
            cache.cache_clear()
    # What a registration clears or rebuilds, which a restore in place bypasses.
    for declared in _declared():
        rebuild = getattr(sys.modules.get(declared.module), declared.rebuild, None)
        if declared.rebuild and rebuild is not None:
            rebuild()
