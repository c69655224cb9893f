# Owner(s): ["module: dynamo"]
"""Dynamo's device tables spliced from the DeviceInterface registry for the
PrivateUse1 backend: in-graph classes, trace rules, handlers, constant folding
and constant types."""

import torch
import torch._dynamo.device_interface as device_interface
import torch._dynamo.testing
from torch._dynamo import trace_rules
from torch._dynamo.device_interface import DeviceInterface
from torch._dynamo.utils import common_constant_types, counters
from torch._dynamo.variables import SkipFunctionVariable, TorchInGraphFunctionVariable
from torch._dynamo.variables.user_defined import UserDefinedClassVariable
from torch.testing._internal.common_utils import run_tests, TestCase


class _FakeStream(torch.Stream):
    pass


class _FakeEvent(torch.Event):
    pass


class _FakeProperties:
    multi_processor_count = 7


_current_device = [0]


def _fake_current_device() -> int:
    # An untraceable body: traced into, this breaks the graph.
    return int(torch._C._get_privateuse1_backend_name() != "") * _current_device[0]


def _fake_get_device_properties(device=None) -> _FakeProperties:
    return _FakeProperties()


class _FakeInterface(DeviceInterface):
    Stream = _FakeStream
    Event = _FakeEvent

    current_device = staticmethod(_fake_current_device)
    get_device_properties = staticmethod(_fake_get_device_properties)

    @staticmethod
    def is_available() -> bool:
        return True

    @staticmethod
    def device_count() -> int:
        return 1

    @staticmethod
    def set_device(device: torch.types.Device) -> None:
        pass

    @staticmethod
    def synchronize(device: torch.types.Device = None) -> None:
        pass


class TestPrivateUse1Tracing(TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        super().setUpClass()
        if torch._C._get_privateuse1_backend_name() == "privateuseone":
            torch.utils.rename_privateuse1_backend("extension_device")
        cls.device = torch._C._get_privateuse1_backend_name()

    def setUp(self) -> None:
        super().setUp()
        device_interface.get_registered_device_interfaces()
        self._saved = dict(device_interface.device_interfaces)
        self._saved_rules = dict(trace_rules._registered_device_trace_rules)
        torch._dynamo.reset()

    def tearDown(self) -> None:
        device_interface.device_interfaces.clear()
        device_interface.device_interfaces.update(self._saved)
        trace_rules._registered_device_trace_rules.clear()
        trace_rules._registered_device_trace_rules.update(self._saved_rules)
        device_interface._invalidate_registry_caches()
        trace_rules.get_device_trace_rule_map.cache_clear()
        torch._dynamo.reset()
        super().tearDown()

    def _register(self, interface: type[DeviceInterface]) -> None:
        for name in list(device_interface.device_interfaces):
            if name.split(":")[0] == self.device:
                del device_interface.device_interfaces[name]
        device_interface.register_interface_for_device_PrivateUse1(self.device, interface)

    def test_slot_rules_are_cudas(self) -> None:
        # A backend's function in a slot is traced exactly like torch.cuda's.
        for slot, rule in trace_rules._device_interface_slot_rules.items():
            self.assertIs(trace_rules.lookup(getattr(torch.cuda, slot)), rule, slot)

    def test_stream_and_event_are_in_graph_after_registration(self) -> None:
        in_graph = UserDefinedClassVariable._in_graph_classes()
        self.assertNotIn(_FakeStream, in_graph)
        self._register(_FakeInterface)
        in_graph = UserDefinedClassVariable._in_graph_classes()
        self.assertIn(_FakeStream, in_graph)
        self.assertIn(_FakeEvent, in_graph)
        # The placeholders of DeviceInterface are never in-graph classes.
        self.assertNotIn(DeviceInterface.Stream, in_graph)

    def test_slot_functions_get_rules(self) -> None:
        self.assertIsNone(trace_rules.get_device_trace_rule_map().get(_fake_current_device))
        self._register(_FakeInterface)
        rules = trace_rules.get_device_trace_rule_map()
        self.assertIs(rules[_fake_current_device], TorchInGraphFunctionVariable)
        # Stubs inherited from DeviceInterface get no rule.
        self.assertNotIn(DeviceInterface.current_stream, rules)

    def test_constant_fold_with_guard(self) -> None:
        interface = type(
            "Folding",
            (_FakeInterface,),
            {"dynamo_constant_fold_fns_need_guards": (_fake_current_device,)},
        )
        self._register(interface)
        counter = torch._dynamo.testing.CompileCounter()

        @torch.compile(backend=counter, fullgraph=True)
        def fn(x: torch.Tensor) -> torch.Tensor:
            return x + _fake_current_device()

        x = torch.zeros(2)
        self.assertEqual(fn(x), x)
        _current_device[0] = 1
        try:
            self.assertEqual(fn(x), x + 1)
        finally:
            _current_device[0] = 0
        self.assertEqual(counter.frame_count, 2)

    def test_device_properties_type_is_constant(self) -> None:
        common_constant_types.discard(_FakeProperties)
        self.assertNotIn(_FakeProperties, common_constant_types)
        try:
            # A class of its own: an interface's properties are read once.
            self._register(type("Fresh", (_FakeInterface,), {}))
            self.assertIn(_FakeProperties, common_constant_types)
        finally:
            common_constant_types.discard(_FakeProperties)

    def test_register_device_trace_rules(self) -> None:
        def runtime_query() -> int:
            return 1

        def fn(x: torch.Tensor) -> torch.Tensor:
            return x + runtime_query()

        counters.clear()
        torch.compile(fn, backend="eager")(torch.zeros(2))
        self.assertEqual(sum(counters["graph_break"].values()), 0)
        trace_rules.register_device_trace_rules({runtime_query: SkipFunctionVariable})
        torch._dynamo.reset()
        counters.clear()
        torch.compile(fn, backend="eager")(torch.zeros(2))
        self.assertEqual(sum(counters["graph_break"].values()), 1)

    def test_register_device_trace_rules_keeps_torch_rules(self) -> None:
        with self.assertRaisesRegex(ValueError, "already has the rule"):
            trace_rules.register_device_trace_rules(
                {torch.cuda.current_device: SkipFunctionVariable}
            )
        self.assertEqual(trace_rules._registered_device_trace_rules, self._saved_rules)

    def test_malformed_slot_refused(self) -> None:
        bad = type("Bad", (_FakeInterface,), {"dynamo_constant_fold_fns": ("x",)})
        with self.assertRaisesRegex(TypeError, "dynamo_constant_fold_fns takes functions"):
            self._register(bad)
        self.assertNotIn(self.device, device_interface.device_interfaces)


if __name__ == "__main__":
    run_tests()
