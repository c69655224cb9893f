"""With no out-of-tree backend, Dynamo's six tables are exactly stock torch's.

Not slice-marked: it holds on stock torch too. It compares a fresh
interpreter with the overlay off against one with the slices under test.

One allowance, for the backports: torch 2.15 takes the in-graph Stream and
Event classes from the registered DeviceInterfaces, where 2.13 and 2.11 name
cuda's and xpu's (placeholders included, in a build without the device).
The registry core's backports bring 2.15's derivation, so on those bases the
classes may be the registered interfaces' instead of the base's list.
"""

from __future__ import annotations

import os

from rfc_shared.testing.helpers import last_json, run_python


DUMP_TABLES = """
import hashlib, json
import torch
from torch._dynamo import trace_rules, utils
from torch._dynamo.device_interface import get_registered_device_interfaces
from torch._dynamo.variables import torch as torch_variables
from torch._dynamo.variables import streams
from torch._dynamo.variables.user_defined import UserDefinedClassVariable

# Functions the slices add to torch for Dynamo to fold have no stock
# counterpart (backend_feature's graph-capture question of the optimizer).
NEW_FUNCTIONS = ("torch.optim.optimizer._device_captures_graphs",)

def name(obj):
    return f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', repr(obj))}"

def names(objs):
    return sorted(n for n in map(name, objs) if n not in NEW_FUNCTIONS)

def stream_or_event(cls):
    return (
        cls.__name__ in ("Stream", "Event")
        and cls not in (torch.Stream, torch.Event)
        and not cls.__module__.startswith("torch.hpu")
    )

in_graph = UserDefinedClassVariable._in_graph_classes()
registered = {
    cls
    for _, interface in get_registered_device_interfaces()
    for cls in (getattr(interface, "Stream", None), getattr(interface, "Event", None))
    if isinstance(cls, type) and issubclass(cls, (torch.Stream, torch.Event))
    and stream_or_event(cls)
}

rules = sorted(
    f"{n}={v.__name__}"
    for n, v in ((name(k), v) for k, v in trace_rules.get_torch_obj_rule_map().items())
    if n not in NEW_FUNCTIONS
)
print(json.dumps({
    "in_graph_classes": names(c for c in in_graph if not stream_or_event(c)),
    "in_graph_streams_and_events": names(c for c in in_graph if stream_or_event(c)),
    "registered_streams_and_events": names(registered),
    # torch 2.11 has no such table.
    "stream_variable_classes": names(getattr(streams, "_stream_fn_to_variable_cls", {})),
    "handlers": names(torch_variables.TorchInGraphFunctionVariable._get_handlers()),
    "trace_rules": [len(rules), hashlib.sha256("\\n".join(rules).encode()).hexdigest()],
    "cuda_lookups": {
        fn: trace_rules.lookup(getattr(torch.cuda, fn)).__name__
        for fn in ("current_stream", "synchronize", "set_device", "get_device_properties")
    },
    "constant_fold": names(torch_variables.constant_fold_functions),
    "constant_fold_need_guards": names(torch_variables.constant_fold_functions_need_guards),
    "common_constant_types": names(utils.common_constant_types),
}))
"""


def test_dynamo_tables_for_builtin_devices_are_stock() -> None:
    slices = os.environ.get("TORCH_RFC_SLICES", "all")
    stock = last_json(run_python(DUMP_TABLES, slices="none"))
    overlaid = last_json(run_python(DUMP_TABLES, slices=slices))
    assert overlaid.keys() == stock.keys()
    for table in stock:
        if table == "in_graph_streams_and_events":
            expected = (stock[table], stock["registered_streams_and_events"])
            assert overlaid[table] in expected, table
        else:
            assert overlaid[table] == stock[table], table
