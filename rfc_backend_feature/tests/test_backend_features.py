"""backend_feature on acc: what acc's DeviceInterface declares in
backend_features() changes each migrated site, declaring nothing reverts it,
is_gpu() answers BackendFeature.GPU, built-in devices answer as on stock
torch, and compiled optimizers trace as on stock torch."""

from __future__ import annotations

import inspect
from types import SimpleNamespace
from unittest import mock

import pytest
import torch

from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.helpers import last_json, run_python


pytestmark = pytest.mark.slice("backend_feature")


def features(*names: str) -> classmethod:
    """A backend_features() declaring the named BackendFeature members."""
    from torch._dynamo.device_interface import BackendFeature

    chosen = {BackendFeature[name] for name in names}
    return classmethod(lambda cls, device=None: set(chosen))


@pytest.fixture
def acc(privateuse1_backend: str) -> torch.device:
    from torch_acc.registration import ensure_device_interface

    ensure_device_interface()
    return torch.device(privateuse1_backend, 0)


def has(device: torch.device, name: str) -> bool:
    from torch._dynamo.device_interface import BackendFeature
    from torch._inductor.codegen.common import has_backend_feature

    return has_backend_feature(device, BackendFeature[name])


def test_acc_declares_what_its_mode_has(acc: torch.device) -> None:
    from torch._dynamo.device_interface import BackendFeature, get_interface_for_device

    from torch_acc._mode import is_cuda_mode, is_gpu_mode

    declared = get_interface_for_device(acc).backend_features(acc)
    assert (BackendFeature.GPU in declared) == is_gpu_mode()
    assert (BackendFeature.ONLINE_SOFTMAX in declared) == is_cuda_mode()
    assert has(acc, "GPU") == is_gpu_mode()
    assert not has(acc, "FP16_FFT")


def test_is_gpu_answers_gpu(acc: torch.device) -> None:
    """One answerer: where is_gpu() and backend_features() disagree, is_gpu()
    decides, in GPU_TYPES and in has_backend_feature() alike; no error."""
    from torch._inductor.utils import GPU_TYPES, is_gpu

    register(variant(is_gpu=lambda: False, backend_features=features("GPU")))
    assert not has(acc, "GPU") and not is_gpu(acc.type) and acc.type not in GPU_TYPES
    register(variant(is_gpu=lambda: True, backend_features=features()))
    assert has(acc, "GPU") and is_gpu(acc.type) and acc.type in GPU_TYPES


def test_is_gpu_is_derived_where_not_overridden(acc: torch.device) -> None:
    from torch._dynamo.device_interface import DeviceInterface

    derived = classmethod(DeviceInterface.is_gpu.__func__)
    register(variant(is_gpu=derived, backend_features=features("GPU")))
    assert has(acc, "GPU")
    register(variant(is_gpu=derived, backend_features=features()))
    assert not has(acc, "GPU")


def test_a_code_generation_member_in_the_interface_is_refused(acc: torch.device) -> None:
    register(variant(backend_features=features("GPU", "FOREACH")))
    with pytest.raises(TypeError, match="declares BackendFeature.FOREACH, which the Inductor"):
        has(acc, "ONLINE_SOFTMAX")


def test_fp16_fft_follows_the_feature(acc: torch.device) -> None:
    from torch._refs.fft import _promote_type_fft

    register(variant(is_gpu=lambda: True, backend_features=features("GPU", "FP16_FFT")))
    assert _promote_type_fft(torch.float16, False, acc) == torch.float16
    register(variant(is_gpu=lambda: True, backend_features=features("GPU")))
    with pytest.raises(RuntimeError, match="Unsupported dtype torch.float16"):
        _promote_type_fft(torch.float16, False, acc)


def softmax_match(device: torch.device) -> SimpleNamespace:
    """What prepare_softmax_extra_check() reads of a pattern match."""
    return SimpleNamespace(
        kwargs={"x": SimpleNamespace(meta={"val": SimpleNamespace(device=device)})}
    )


def test_online_softmax_follows_the_interface(acc: torch.device) -> None:
    from torch._inductor import config
    from torch._inductor.codegen import common
    from torch._inductor.codegen.cpp import CppScheduling
    from torch._inductor.codegen.triton import TritonScheduling
    from torch._inductor.fx_passes.post_grad import prepare_softmax_extra_check

    with (
        config.patch(online_softmax=True),
        mock.patch.object(common, "init_backend_registration") as init,
        mock.patch.object(
            common, "get_scheduling_for_device", return_value=TritonScheduling
        ) as scheduling,
    ):
        register(variant(is_gpu=lambda: True, backend_features=features("GPU")))
        assert not prepare_softmax_extra_check(softmax_match(acc))
        scheduling.assert_not_called()
        register(variant(is_gpu=lambda: True, backend_features=features("GPU", "ONLINE_SOFTMAX")))
        assert prepare_softmax_extra_check(softmax_match(acc))
        # Only Triton has online-softmax kernels: a declaring device whose
        # scheduling is another code generator's is not rewritten.
        scheduling.return_value = CppScheduling
        assert not prepare_softmax_extra_check(softmax_match(acc))
    # Asked of the interface, and the scheduling looked up (a class, not
    # built): no backend registration run.
    init.assert_not_called()
    scheduling.assert_called_with("acc")


@pytest.mark.parametrize("declared", [False, True])
def test_compiled_softmax_on_acc(acc: torch.device, declared: bool) -> None:
    """End to end: the rewrite happens exactly where acc declares it. A row
    short enough for one block: Triton's interpreter (acc's gpu mode) runs
    that kernel, not the looped one."""
    from torch._inductor.utils import run_and_get_code

    from torch_acc._mode import is_gpu_mode

    if not is_gpu_mode():
        pytest.skip("acc generates C++ kernels in host mode; online softmax is Triton's")
    names = ("GPU", "ONLINE_SOFTMAX") if declared else ("GPU",)
    register(variant(is_gpu=lambda: True, backend_features=features(*names)))

    def fn(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)

    x = torch.randn(8, 300, device=acc)
    torch._dynamo.reset()
    out, (code, *_) = run_and_get_code(torch.compile(fn), x)
    torch.testing.assert_close(out.cpu(), fn(x.cpu()))
    assert ("prepare_softmax_online" in code) == declared


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
    """The graph-capture check, asked from traced code, is folded into a
    constant rather than "marked as skipped"."""
    from torch.optim.optimizer import _device_captures_graphs  # the slice's

    assert callable(_device_captures_graphs)
    functional_adam_on(torch.device(device))
    adam_step_on(torch.device(device))


def test_a_device_that_captures_graphs_falls_back_to_eager(acc: torch.device) -> None:
    register(variant(is_gpu=lambda: True, backend_features=features("GPU", "GRAPH_CAPTURE")))
    with pytest.raises(torch._dynamo.exc.Unsupported, match="disable"):
        functional_adam_on(acc)
    register(variant(is_gpu=lambda: True, backend_features=features("GPU")))
    functional_adam_on(acc)


def compiled_adamw_on(device: torch.device) -> tuple[set[str], list[torch.Tensor]]:
    """A compiled AdamW step's state step counts' device types, and its
    parameters after the step."""
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    model(torch.randn(5, 3, device=device)).sum().backward()
    torch._dynamo.reset()
    torch.compile(opt.step, backend="eager")()
    return {state["step"].device.type for state in opt.state.values()}, [
        p.detach().cpu() for p in model.parameters()
    ]


def test_compiled_optimizers_keep_step_counts_on_a_device_that_captures_graphs(
    acc: torch.device,
) -> None:
    """Dynamo makes a new optimizer state capturable (step counts on the
    parameters' device, no host kernel in the compiled step) on a device
    declaring GRAPH_CAPTURE, as on CUDA; elsewhere the counts stay on the
    host, as on stock torch. The parameters come out the same."""
    register(variant(is_gpu=lambda: True, backend_features=features("GPU")))
    on_host, expected = compiled_adamw_on(acc)
    assert on_host == {"cpu"}
    register(variant(is_gpu=lambda: True, backend_features=features("GPU", "GRAPH_CAPTURE")))
    on_device, actual = compiled_adamw_on(acc)
    assert on_device == {acc.type}
    torch.testing.assert_close(actual, expected)


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
names.append("hpu")  # no DeviceInterface in PyTorch
fft["hpu"] = half_fft("hpu")
from torch._inductor import config
from torch._inductor.fx_passes.post_grad import prepare_softmax_extra_check
softmax = {}
for backend in ("triton", "halide"):
    with config.patch(online_softmax=True, cuda_backend=backend):
        softmax[backend] = {n: bool(prepare_softmax_extra_check(SimpleNamespace(
            kwargs={"x": SimpleNamespace(meta={"val": SimpleNamespace(device=torch.device(n))})})))
            for n in names}
from torch._inductor.utils import GPU_TYPES, is_gpu
gpu = {"types": sorted(GPU_TYPES), "is_gpu": {n: is_gpu(n) for n in names}}

torch.manual_seed(0)
model = torch.nn.Linear(3, 2)
opt = torch.optim.Adam(model.parameters(), lr=0.01, foreach=False)
model(torch.randn(5, 3)).sum().backward()
opt.step()
with torch.no_grad():
    torch.compile(inspect.unwrap(torch.optim.Adam.step), backend="eager", fullgraph=True)(opt)
print(json.dumps({"light": light, "fft": fft, "softmax": softmax, "gpu": gpu,
                  "adam": [p.tolist() for p in model.parameters()]}))
"""


def test_builtin_devices_get_the_stock_answers() -> None:
    from torch._dynamo.device_interface import BackendFeature

    assert BackendFeature.GRAPH_CAPTURE  # the slice is applied in this process
    stock = last_json(run_python(BUILTIN, slices="none"))
    assert stock["light"]
    assert last_json(run_python(BUILTIN)) == stock
