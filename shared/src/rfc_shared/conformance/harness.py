"""What every probe stands on: the backend under test, interface variants,
and registering one for the duration of a probe.

A probe never asks the backend's own interface what the answer is: it
registers a variant that says one thing, checks what torch answers, registers
one that says the opposite, and checks again. Only a torch that asks the
registry passes both.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch

from rfc_shared.conformance.interface_entry import register_privateuse1_interface
from rfc_shared.conformance.registry import RegistrySnapshot, clear_derived_caches


class ProbeFailure(AssertionError):
    """The site does not behave as the RFC asks; the message is the evidence."""


class NotApplicable(Exception):
    """The probe does not apply to this backend (it lacks the API the site
    is about); the message says what is missing."""


def runtime(attribute: str) -> Any:
    """``torch.<backend>.<attribute>``, or "not applicable" when the backend's
    runtime module has no such function or class (not every backend has
    streams, events, ``synchronize`` or device properties)."""
    value = getattr(subject().module, attribute, None)
    if value is None:
        raise NotApplicable(f"torch.{subject().name} has no {attribute}")
    return value


def check(condition: object, evidence: str) -> None:
    if not condition:
        raise ProbeFailure(evidence)


def check_follows(
    question: str, answers: dict[str, object], expected: dict[str, object], told: dict[str, str]
) -> None:
    """Fails unless each variant got its expected answer, saying in words what
    ``question`` answered where the interface said what (``told``: label ->
    what that variant's interface says)."""
    if answers == expected:
        return
    said = "; ".join(
        f"{answers[label]!r} where the interface says {told[label]} (expected {expected[label]!r})"
        for label in expected
    )
    raise ProbeFailure(f"{question} does not follow the DeviceInterface: {said}")


@dataclass(frozen=True)
class Subject:
    """The PrivateUse1 backend under test."""

    name: str
    module: ModuleType

    @property
    def device(self) -> torch.device:
        return torch.device(self.name, 0)


@functools.cache
def subject() -> Subject:
    from rfc_shared.conformance.backend import backend_package

    from .backend import resolve

    name = resolve(backend_package())
    module = getattr(torch, name, None)
    if module is None:
        raise RuntimeError(f"the PrivateUse1 backend {name!r} registered no torch.{name} module")
    return Subject(name, module)


def registry() -> ModuleType:
    """``torch._dynamo.device_interface``, as the torch in use serves it."""
    return importlib.import_module("torch._dynamo.device_interface")


def require(module: object, attribute: str, where: str) -> Any:
    """``module.attribute``, or a probe failure saying it does not exist."""
    value = getattr(module, attribute, None)
    check(value is not None, f"{where}.{attribute} does not exist")
    return value


def ask_each(question: Callable[[], object], **cases: type) -> dict[str, object]:
    """What ``question()`` returns with each interface registered in turn."""
    found = {}
    for label, interface in cases.items():
        with isolated():
            register(interface)
            found[label] = question()
    return found


@functools.cache
def base_interface() -> type:
    """The backend's DeviceInterface: the one registered when first asked, or
    else the one its device module gives (``torch.<name>.get_device_interface()``,
    the hook the registry asks where lazy registration is applied).
    Remembered, so that variants registered later never become the base of
    other variants.

    Raises:
        NotApplicable: the backend registered no interface and its device
            module gives none, so there is nothing to vary.
    """
    interfaces = registry()
    name = subject().name
    found = dict(interfaces.get_registered_device_interfaces()).get(name)
    if found is not None:
        return found
    hook = getattr(subject().module, "get_device_interface", None)
    if hook is None:
        raise NotApplicable(
            f"torch.{name} registered no DeviceInterface and has no get_device_interface()"
        )
    return hook()


def _defines(klass: type, name: str, default: type) -> bool:
    """Whether ``klass`` defines ``name`` rather than inheriting ``default``'s."""
    for k in klass.__mro__:
        if k is default:
            return False
        if name in vars(k):
            return True
    return False


def implements(interface: type, name: str) -> bool:
    """Whether ``interface`` (or its Worker) defines ``name`` rather than
    inheriting Dynamo's raising default."""
    base = registry().DeviceInterface
    worker = getattr(interface, "Worker", base.Worker)
    return _defines(interface, name, base) or _defines(worker, name, base.Worker)


@dataclass(frozen=True)
class StandInDeviceProperties:
    """Device properties a probe gives a GPU-class variant of a backend that
    has none (a host device): the registry requires them of GPU-class
    interfaces, and Inductor reads these fields."""

    multi_processor_count: int = 4
    warp_size: int = 32
    major: int = 8
    minor: int = 0


def _answers(interface: type, name: str) -> bool:
    """Whether ``interface`` implements ``name`` and it answers for the device
    (a host-class backend may define ``get_device_properties`` only to raise)."""
    if not implements(interface, name):
        return False
    try:
        getattr(interface, name)(subject().device)
    except Exception:
        return False
    return True


def device_property_stand_ins(interface: type | None = None) -> dict[str, Any]:
    """``get_device_properties`` and ``get_compute_capability`` overrides for
    a variant of ``interface`` (default: the backend's) that lacks them or
    whose own raise: a variant must not inherit a method that raises."""
    interface = base_interface() if interface is None else interface
    found: dict[str, Any] = {}
    if not _answers(interface, "get_device_properties"):
        found["get_device_properties"] = lambda device=None: StandInDeviceProperties()
    if not _answers(interface, "get_compute_capability"):
        found["get_compute_capability"] = lambda device=None: 80
    return found


class StandInStream(torch.Stream):
    """The Stream a probe gives a variant of a backend without streams, where
    the site it checks is about a device that has them."""


def stream_class() -> type:
    """The backend's Stream, or :class:`StandInStream` if it has none."""
    interface = base_interface()
    return interface.Stream if exposes_streams(interface) else StandInStream


def exposes_streams(interface: type) -> bool:
    return interface.Stream is not registry().DeviceInterface.Stream


def variant(**overrides: Any) -> type:
    """A subclass of the backend's interface with ``overrides`` (values that
    are plain functions become staticmethods).

    A GPU-class variant of a backend without device properties (a host device
    like OpenReg) gets :func:`device_property_stand_ins`, which the registry
    requires of GPU-class interfaces, for the members ``overrides`` does not
    give: what the caller gives is what the variant has, raising or not.
    """
    namespace = {
        key: staticmethod(value) if callable(value) and not isinstance(value, type) else value
        for key, value in overrides.items()
    }
    made = type("ProbeVariant", (base_interface(),), {"__module__": __name__, **namespace})
    # Asked only of a backend without device properties: an override of
    # is_gpu() may not be callable before the class is bound to its name.
    # Stock torch before 2.15 has no is_gpu(): no GPU-class variant there.
    stand_ins = device_property_stand_ins(made)
    if stand_ins and getattr(made, "is_gpu", lambda: False)():
        for key, value in stand_ins.items():
            if key not in overrides:
                setattr(made, key, staticmethod(value))
    return made


def register(interface: type) -> None:
    """Registers ``interface`` for the backend through the best entry the
    torch in use has, replacing what the backend registered."""
    interfaces = registry()
    name = subject().name
    interfaces.get_registered_device_interfaces()
    for key in [k for k in interfaces.device_interfaces if k.split(":")[0] == name]:
        del interfaces.device_interfaces[key]
    register_privateuse1_interface(name, interface, subject().module.device_count)
    clear_derived_caches()  # answers cached from the interface registered before


@contextlib.contextmanager
def isolated() -> Iterator[None]:
    """Leave the registries and derived caches as they were."""
    registry()
    snapshot = RegistrySnapshot.take()
    try:
        yield
    finally:
        snapshot.restore()
        clear_derived_caches()
