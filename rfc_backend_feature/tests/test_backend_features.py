"""backend_feature on acc: opting into a feature changes each migrated site;
opting out reverts it; built-in devices answer as on stock torch, and
compiled optimizers trace as on stock torch."""

from __future__ import annotations

import dataclasses
import inspect
from types import SimpleNamespace

import pytest
import torch

from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.helpers import last_json, run_python


pytestmark = pytest.mark.slice("backend_feature")


def features(*names: str) -> classmethod:
    from torch.utils._backend_features import BackendFeature

    chosen = frozenset(BackendFeature[name] for name in names)
    return classmethod(lambda cls, device=None: chosen)


@pytest.fixture
def acc(privateuse1_backend: str) -> torch.device:
    return torch.device(privateuse1_backend, 0)


def test_gpu_is_declared_by_is_gpu(acc: torch.device) -> None:
    from torch._inductor.utils import GPU_TYPES, is_gpu
    from torch.utils._backend_features import BackendFeature, get_device_backend_features

    register(variant(is_gpu=lambda: True))
    assert get_device_backend_features(acc) == {BackendFeature.GPU}
    assert is_gpu(acc.type) and acc.type in GPU_TYPES
    register(variant(is_gpu=lambda: False))
    assert get_device_backend_features(acc) == frozenset()
    assert not is_gpu(acc.type) and acc.type not in GPU_TYPES


def test_an_is_gpu_that_calls_super_does_not_recurse(acc: torch.device) -> None:
    from torch.utils._backend_features import get_device_backend_features

    def is_gpu(cls: type) -> bool:
        return super(interface, cls).is_gpu()

    interface = variant(is_gpu=classmethod(is_gpu))
    register(interface)
    assert interface.is_gpu()  # acc's own answer, from the class above
    assert get_device_backend_features(acc) == interface.backend_features()


def test_a_feature_set_contradicting_is_gpu_is_refused(acc: torch.device) -> None:
    from torch.utils._backend_features import get_device_backend_features

    register(variant(is_gpu=lambda: True, backend_features=features("FP16_FFT")))
    with pytest.raises(TypeError, match="declare BackendFeature.GPU through is_gpu"):
        get_device_backend_features(acc)


def test_fp16_fft_follows_the_feature(acc: torch.device) -> None:
    from torch._refs.fft import _promote_type_fft

    register(variant(is_gpu=lambda: True, backend_features=features("GPU", "FP16_FFT")))
    assert _promote_type_fft(torch.float16, False, acc) == torch.float16
    register(variant(is_gpu=lambda: True))  # acc as it ships: no half FFT
    with pytest.raises(RuntimeError, match="Unsupported dtype torch.float16"):
        _promote_type_fft(torch.float16, False, acc)


def softmax_match(device: torch.device) -> SimpleNamespace:
    """What prepare_softmax_extra_check() reads of a pattern match."""
    return SimpleNamespace(
        kwargs={"x": SimpleNamespace(meta={"val": SimpleNamespace(device=device)})}
    )


def test_online_softmax_is_the_schedulings_to_declare(acc: torch.device) -> None:
    from torch._inductor import config
    from torch._inductor.codegen import common
    from torch._inductor.codegen.common import BackendFeature
    from torch._inductor.fx_passes.post_grad import prepare_softmax_extra_check
    from torch.utils._ordered_set import OrderedSet

    from torch_acc.registration import register_inductor_backend

    register_inductor_backend()  # GPU-class acc: Triton scheduling
    common.init_backend_registration()  # before saving: it registers once per process
    saved = dict(common.device_codegens)
    scheduling = common.get_scheduling_for_device(acc.type)

    class Declaring(scheduling):  # type: ignore[misc, valid-type]
        @classmethod
        def get_backend_features(cls, device: torch.device) -> OrderedSet[BackendFeature]:
            return OrderedSet(
                [*super().get_backend_features(device), BackendFeature.ONLINE_SOFTMAX]
            )

    try:
        with config.patch(online_softmax=True):
            # acc as it ships: its kernels run in Triton's interpreter, which
            # cannot run the online-softmax kernels, so it declares nothing.
            assert not prepare_softmax_extra_check(softmax_match(acc))
            common.device_codegens[acc.type] = dataclasses.replace(
                common.device_codegens[acc.type], scheduling=Declaring
            )
            assert prepare_softmax_extra_check(softmax_match(acc))
    finally:
        common.device_codegens.clear()
        common.device_codegens.update(saved)


def functional_adam_on(device: torch.device) -> None:
    from torch.optim.adam import adam

    def inputs() -> list[list[torch.Tensor]]:
        torch.manual_seed(0)
        params = [torch.randn(4, device=device), torch.randn(3, 2, device=device)]
        grads = [torch.randn_like(p) for p in params]
        zeros = [[torch.zeros_like(p) for p in params] for _ in range(2)]
        # Step counts on the device, as capturable=True would keep them.
        return [params, grads, *zeros, [torch.tensor(1.0, device=device) for _ in params]]

    def step(params, grads, exp_avgs, exp_avg_sqs, steps) -> None:
        adam(params, grads, exp_avgs, exp_avg_sqs, [], steps, foreach=False,
             capturable=False, amsgrad=False, beta1=0.9, beta2=0.999, lr=0.01,
             weight_decay=0.0, eps=1e-8, maximize=False)  # fmt: skip

    expected, actual = inputs(), inputs()
    step(*expected)
    torch._dynamo.reset()
    torch.compile(step, backend="eager", fullgraph=True)(*actual)
    torch.testing.assert_close(actual, expected)


def adam_step_on(device: torch.device) -> None:
    def optimizer() -> torch.optim.Adam:
        torch.manual_seed(0)
        model = torch.nn.Linear(3, 2).to(device)
        opt = torch.optim.Adam(model.parameters(), lr=0.01, foreach=False)
        model(torch.randn(5, 3, device=device)).sum().backward()
        opt.step()
        return opt

    expected, actual = optimizer(), optimizer()
    expected.step()
    torch._dynamo.reset()
    with torch.no_grad():  # the step's body: its wrappers break the graph on purpose
        torch.compile(inspect.unwrap(torch.optim.Adam.step), backend="eager", fullgraph=True)(
            actual
        )
    torch.testing.assert_close(actual.param_groups[0]["params"], expected.param_groups[0]["params"])


@pytest.mark.parametrize("device", ["cpu", "acc"])
def test_compiled_optimizers_trace_in_one_graph(device: str, acc: torch.device) -> None:
    """The review's regression: the graph-capture check, asked from traced
    code, must be folded rather than "marked as skipped"."""
    from torch.utils._backend_features import device_has_backend_feature  # the slice's

    from torch_acc.registration import ensure_device_interface

    ensure_device_interface()
    assert callable(device_has_backend_feature)
    functional_adam_on(torch.device(device))
    adam_step_on(torch.device(device))


def test_a_device_that_captures_graphs_falls_back_to_eager(acc: torch.device) -> None:
    register(variant(is_gpu=lambda: True, backend_features=features("GPU", "GRAPH_CAPTURE")))
    with pytest.raises(torch._dynamo.exc.Unsupported, match="disable"):
        functional_adam_on(acc)
    register(variant(is_gpu=lambda: True))
    functional_adam_on(acc)


BUILTIN = """
import inspect, json, sys, torch
from types import SimpleNamespace
from torch._refs.fft import _promote_type_fft
import torch.optim  # eager modules: none of them imports Dynamo
light = "torch._dynamo" not in sys.modules

def half_fft(device):
    try:
        return str(_promote_type_fft(torch.float16, False, torch.device(device)))
    except RuntimeError as e:
        return str(e)

names = ["cuda", "xpu", "mtia", "mps", "cpu", "meta"]  # PyTorch's own
fft = {n: half_fft(n) for n in names}
light = light and "torch._dynamo" not in sys.modules
names.append("hpu")  # no DeviceInterface in PyTorch: the slice asks the registry
fft["hpu"] = half_fft("hpu")
from torch._inductor import config
from torch._inductor.fx_passes.post_grad import prepare_softmax_extra_check
softmax = {}
for backend in ("triton", "halide"):
    with config.patch(online_softmax=True, cuda_backend=backend):
        softmax[backend] = {n: bool(prepare_softmax_extra_check(SimpleNamespace(
            kwargs={"x": SimpleNamespace(meta={"val": SimpleNamespace(device=torch.device(n))})})))
            for n in names}

torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
opt = torch.optim.Adam(model.parameters(), lr=0.01, foreach=False)
model(torch.randn(5, 3)).sum().backward()
opt.step()
with torch.no_grad():
    torch.compile(inspect.unwrap(torch.optim.Adam.step), backend="eager", fullgraph=True)(opt)
print(json.dumps({"light": light, "fft": fft, "softmax": softmax,
                  "adam": [p.tolist() for p in model.parameters()]}))
"""


def test_builtin_devices_get_the_stock_answers() -> None:
    from torch.utils._backend_features import BackendFeature

    assert BackendFeature.GRAPH_CAPTURE  # the slice is applied in this process
    stock = last_json(run_python(BUILTIN, slices="none"))
    assert stock["light"]
    assert last_json(run_python(BUILTIN)) == stock
