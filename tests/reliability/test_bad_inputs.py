"""Every mistake in ``bad_inputs.MISTAKES`` gets a clear error or exactly one
warning, and leaves the registry, the derived caches, Inductor's backend
tables and the overlay exactly as they were."""

from __future__ import annotations

import re
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from bad_inputs import MISTAKES, Mistake, markdown


TABLE = Path(__file__).resolve().parents[2] / "docs" / "_generated" / "bad_inputs.md"
_messages: dict[int, str] = {}


@pytest.fixture(scope="module", autouse=True)
def _write_table() -> Iterator[None]:
    yield
    if len(_messages) == len(MISTAKES):  # only a complete run describes the matrix
        TABLE.parent.mkdir(parents=True, exist_ok=True)
        TABLE.write_text(markdown(_messages), encoding="utf-8")


@pytest.fixture(autouse=True)
def acc(privateuse1_backend: str) -> None:
    from torch._inductor.codegen import common

    from torch_acc.registration import register_inductor_backend

    register_inductor_backend()
    # Initialized on first use anyway; done here so that a row sees only its own effect.
    common.init_backend_registration()
    common.get_device_op_overrides("cpu")


def observable_state() -> dict[str, Any]:
    """What a mistake must not change."""
    from torch._dynamo import device_interface, trace_rules
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable
    from torch._inductor import config
    from torch._inductor.codegen import common
    from torch._inductor.utils import GPU_TYPES

    from rfc_shared import overlay

    return {
        "interfaces": dict(device_interface.device_interfaces),
        "gpu_types": list(GPU_TYPES),
        "in_graph_classes": frozenset(UserDefinedClassVariable._in_graph_classes()),
        # Rules the interface declares, and the functions it binds to the
        # methods it names.
        "device_trace_rules": dict(trace_rules._device_trace_rules),
        "bound_functions": dict(trace_rules._device_interface_methods),
        "backends": dict(common.device_codegens),
        "op_overrides": dict(common.device_op_overrides_dict),
        "inductor_config": config.get_config_copy(),
        "overlay": overlay.active(),
        "meta_path": list(sys.meta_path),
    }


@pytest.mark.parametrize(
    "index", range(len(MISTAKES)), ids=[f"{m.entry}: {m.mistake}" for m in MISTAKES]
)
def test_mistake_is_answered_and_changes_nothing(index: int) -> None:
    mistake: Mistake = MISTAKES[index]
    before = observable_state()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if issubclass(mistake.expect, Warning):
            mistake.act()
            relevant = [w for w in caught if issubclass(w.category, mistake.expect)]
            assert len(relevant) == 1, [str(w.message) for w in caught]
            message = str(relevant[0].message)
        else:
            with pytest.raises(mistake.expect, match=mistake.match) as info:
                mistake.act()
            first = info.value.args[0] if info.value.args else None
            message = first if isinstance(first, str) else str(info.value)
    assert re.search(mistake.match, message), message
    after = observable_state()
    changed = [key for key in before if before[key] != after[key]]
    assert not changed, f"changed: {changed}"
    _messages[index] = message
    torch._dynamo.reset()
