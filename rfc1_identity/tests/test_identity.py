"""rfc1 on acc: identity and capability answers come from the registry."""

from __future__ import annotations

import threading
import warnings

import pytest
import torch

from rfc_shared.conformance.corpus import CASES, assert_same, run
from rfc_shared.conformance.harness import register, variant
from rfc_shared.testing.helpers import last_json, run_python


pytestmark = pytest.mark.slice("rfc1")


@pytest.fixture
def utils():
    import torch._inductor.utils as utils

    return utils


@pytest.fixture
def acc(privateuse1_backend: str) -> str:
    from torch_acc.registration import device_interface

    register(device_interface())
    return privateuse1_backend


def test_acc_is_a_gpu_with_guards_and_the_default_gpu_type(utils, acc: str) -> None:
    assert utils.is_gpu(acc)
    assert acc in utils.GPU_TYPES
    assert utils.device_need_guard(acc)
    assert utils.get_gpu_type() == acc


def test_the_answers_flip_with_the_interface(utils, acc: str) -> None:
    register(variant(is_gpu=lambda: False))
    assert not utils.is_gpu(acc) and acc not in utils.GPU_TYPES
    assert not utils.device_need_guard(acc)
    assert utils.get_gpu_type() == "cuda"
    register(variant(is_gpu=lambda: True, Stream=utils.get_interface_for_device("cpu").Stream))
    assert utils.is_gpu(acc) and not utils.device_need_guard(acc)


def test_acc_imported_after_inductor_is_a_gpu() -> None:
    """The import-order scenario stock 2.15's import-time GPU_TYPES misses."""
    done = run_python(
        """
        import json, torch
        import torch._inductor.utils as utils  # GPU_TYPES scanned here
        from torch_acc.registration import register_device_interface
        register_device_interface()  # afterwards, as lazy registration would
        print(json.dumps([utils.is_gpu("acc"), "acc" in utils.GPU_TYPES,
                          utils.get_gpu_type(), type(utils.GPU_TYPES).__name__]))
        """
    )
    assert last_json(done) == [True, True, "acc", "list"]


def test_a_rescan_racing_a_registration_sees_it(utils, acc: str) -> None:
    """Two registrations at once: the rescan that writes last has seen both
    (a rescan outside the registry's lock could write the earlier list last)."""
    from torch._dynamo import device_interface as di

    register(variant(is_gpu=lambda: False))
    scanning = threading.Event()
    go_on = threading.Event()

    def slow_is_gpu() -> bool:
        scanning.set()
        go_on.wait(10)
        return False

    first = threading.Thread(
        target=di.register_interface_for_device, args=("slow_scan", variant(is_gpu=slow_is_gpu))
    )
    first.start()
    scanning.wait(10)  # the first registration's rescan is under way
    second = threading.Thread(target=register, args=(variant(is_gpu=lambda: True),))
    second.start()
    go_on.set()
    first.join(10)
    second.join(10)
    assert utils.is_gpu(acc) and acc in utils.GPU_TYPES


def test_two_available_gpu_types_resolve_privateuse1_first(utils, acc: str) -> None:
    from torch._dynamo.device_interface import register_interface_for_device

    other = variant(is_gpu=lambda: True, is_available=lambda: True)
    register_interface_for_device("second_gpu", other)
    assert {"second_gpu", acc} <= set(utils.GPU_TYPES)
    assert utils.get_gpu_type() == acc


def test_has_triton_asks_is_triton_capable(acc: str) -> None:
    from torch.utils._triton import has_triton

    assert has_triton()  # acc can run Triton, through its interpreter
    register(variant(is_triton_capable=lambda device=None: False))
    assert not has_triton()
    register(variant(is_triton_capable=lambda device=None: True))
    assert has_triton()


def test_triton_missing_is_reported_for_a_gpu_whose_codegen_is_triton(acc: str) -> None:
    from torch._dynamo.exc import TritonUnavailableError
    from torch._inductor.exc import TritonMissing

    from torch_acc.registration import register_inductor_backend

    def unavailable(device: object = None) -> None:
        raise TritonUnavailableError("no Triton backend for acc")

    register_inductor_backend()  # GPU-class mode: acc's scheduling is Triton
    register(variant(raise_if_triton_unavailable=unavailable))  # but Triton cannot run
    x = torch.randn(4, device=acc)
    torch._dynamo.reset()
    with pytest.raises(TritonMissing):
        torch.compile(lambda t: t.cos() + 1)(x)


NO_DEVICE_QUERY = """
import json, sys, torch
calls = []
count = torch._C._cuda_getDeviceCount
torch._C._cuda_getDeviceCount = lambda: calls.append(1) or count()
import torch._inductor.lowering  # GPU_TYPES scanned, the registry initialized
import torch._inductor.utils as utils
print(json.dumps([len(calls), torch.cuda.is_initialized(), "torch_acc" in sys.modules,
                  type(utils.GPU_TYPES).__name__, hasattr(utils, "_refresh_gpu_types")]))
"""


def test_importing_inductor_queries_no_device() -> None:
    """The regression of #190326's first landing (upstream's
    test_no_xpu_device_query_on_inductor_import, for CUDA): importing Inductor
    counts no device, as on stock."""
    stock = last_json(run_python(NO_DEVICE_QUERY, slices="none"))
    assert stock == [0, False, False, "list", False]
    assert last_json(run_python(NO_DEVICE_QUERY)) == [0, False, False, "list", True]


BUILTIN = ["cuda", "xpu", "mtia", "mps", "cpu", "tpu", "meta", "cuda:0", "hpu", None]

IDENTITY = f"""
    import json, torch
    import torch._inductor.utils as u
    from torch.utils._triton import has_triton
    from torch._inductor.runtime.hints import DeviceProperties
    names = {BUILTIN!r}
    print(json.dumps({{
        "is_gpu": [u.is_gpu(n) for n in names],
        "device_need_guard": [u.device_need_guard(n) for n in names if n],
        "gpu_types": sorted(u.GPU_TYPES),
        "get_gpu_type": u.get_gpu_type(),
        "has_triton": has_triton(),
        "cpu_sms": DeviceProperties.create(torch.device("cpu")).multi_processor_count,
    }}))
"""


def test_builtin_devices_get_the_stock_answers(utils) -> None:
    assert hasattr(utils, "_refresh_gpu_types")  # rfc1's GPU_TYPES follows registrations
    stock = last_json(run_python(IDENTITY, slices="none"))
    assert last_json(run_python(IDENTITY)) == stock


def test_the_corpus_compiles_on_acc_including_the_second_device(acc: str) -> None:
    from torch_acc.registration import register_inductor_backend

    register_inductor_backend()
    for case in (CASES["second_device"], CASES["reductions"]):
        torch._dynamo.reset()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            assert_same(case, run(case, acc, {"backend": "inductor"}), run(case, "cpu"))
