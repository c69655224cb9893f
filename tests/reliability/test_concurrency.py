"""Registrations and lookups from many threads at once: consistent answers,
no exception, bounded time."""

from __future__ import annotations

import threading
from collections.abc import Callable

import torch

from rfc_shared.conformance.harness import base_interface


THREADS = 8
ROUNDS = 200
DEADLINE_S = 120


def run_threads(workers: list[Callable[[], None]]) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(len(workers))

    def guarded(work: Callable[[], None]) -> None:
        try:
            start.wait()
            work()
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=guarded, args=(w,), daemon=True) for w in workers]
    for t in threads:
        t.start()
    for t in threads:
        t.join(DEADLINE_S)
    assert not any(t.is_alive() for t in threads), f"threads still running after {DEADLINE_S}s"
    return errors


def test_registration_and_lookups_from_many_threads(privateuse1_backend: str) -> None:
    import torch._dynamo.device_interface as registry
    from torch._dynamo.trace_rules import _get_device_trace_rule
    from torch._dynamo.variables.user_defined import UserDefinedClassVariable
    from torch._inductor.utils import GPU_TYPES, get_gpu_type, is_gpu

    from torch_acc.registration import ensure_device_interface

    ensure_device_interface()
    acc = registry.get_interface_for_device("acc")
    extra = [type(f"Extra{i}", (base_interface(),), {}) for i in range(THREADS // 2)]

    def register(index: int) -> Callable[[], None]:
        def work() -> None:
            for round_ in range(ROUNDS):
                # The same interface again is a no-op; new names are added.
                registry.register_interface_for_device_PrivateUse1("acc", acc)
                registry.register_interface_for_device(f"extra{index}_{round_}", extra[index])

        return work

    def look_up() -> None:
        for _ in range(ROUNDS):
            assert registry.get_interface_for_device("acc") is acc
            assert registry.get_interface_for_device("acc:1") is acc
            assert is_gpu("acc") and "acc" in GPU_TYPES and "cuda" in list(GPU_TYPES)
            assert get_gpu_type() == "acc"
            assert dict(registry.get_registered_device_interfaces())["acc"] is acc
            assert torch.acc.Stream in UserDefinedClassVariable._in_graph_classes()
            assert _get_device_trace_rule(torch.acc.current_stream) is not None

    errors = run_threads([register(i) for i in range(THREADS // 2)] + [look_up] * (THREADS // 2))
    assert not errors, errors[:3]
    for index in range(THREADS // 2):
        for round_ in range(ROUNDS):
            assert registry.device_interfaces[f"extra{index}_{round_}"] is extra[index]
