"""acc's Python wrapper codegen: Inductor's, plus what acc's options ask for."""

from __future__ import annotations

import sympy
from torch._inductor import ir
from torch._inductor.codegen.wrapper import PythonWrapperCodegen

from . import config


class AccPythonWrapperCodegen(PythonWrapperCodegen):
    @staticmethod
    def create(
        is_subgraph: bool,
        subgraph_name: str | None,
        parent_wrapper: PythonWrapperCodegen | None,
        partition_signatures: ir.GraphPartitionSignature | None = None,
    ) -> PythonWrapperCodegen:
        if is_subgraph:
            return PythonWrapperCodegen.create(
                is_subgraph, subgraph_name, parent_wrapper, partition_signatures
            )
        return AccPythonWrapperCodegen()

    def codegen_inputs(self) -> None:
        super().codegen_inputs()
        if not config.check_input_devices:
            return
        self.prefix.writeline("# acc.check_input_devices")
        for name, buf in self.get_graph_inputs().items():
            if isinstance(buf, (sympy.Basic, ir.TorchBindObject)):
                continue
            self.prefix.writeline(
                f"assert {name}.device.type == 'acc', "
                f"f'{name} is on {{{name}.device}}, expected an acc device'"
            )


def _cpp_wrapper_over(base: type, peer: str) -> type:
    """Inductor's C++ wrapper class ``base`` for acc, with the wrapper header
    and C shims of ``peer``, the device whose memory acc's is."""

    def on_peer(device: str) -> str:
        return peer if device == "acc" else device

    class AccCppWrapper(base):  # type: ignore[misc, valid-type]
        @staticmethod
        def create(
            is_subgraph: bool,
            subgraph_name: str | None,
            parent_wrapper: PythonWrapperCodegen | None,
            partition_signatures: ir.GraphPartitionSignature | None = None,
        ) -> PythonWrapperCodegen:
            return AccCppWrapper()

        # torch 2.13 names the header by mode (jit/aot), 2.11 by device alone.
        @staticmethod
        def get_device_include_path(device: str) -> str:
            return base.get_device_include_path(on_peer(device))

        @staticmethod
        def get_device_include_path_jit(device: str) -> str:
            return base.get_device_include_path_jit(on_peer(device))

        @staticmethod
        def get_device_include_path_aot(device: str) -> str:
            return base.get_device_include_path_aot(on_peer(device))

        @staticmethod
        def get_c_shim_func_name(kernel: str, device: str) -> str:
            # acc has no C shims of its own; its peer's run on its memory.
            return base.get_c_shim_func_name(kernel, on_peer(device))

    AccCppWrapper.__name__ = AccCppWrapper.__qualname__ = f"Acc{base.__name__}"
    return AccCppWrapper


def cpp_wrapper_codegen() -> type:
    """acc's C++ wrapper for host mode: Inductor's CPU one, since acc memory is
    host memory."""
    from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu

    return _cpp_wrapper_over(CppWrapperCpu, "cpu")


def cuda_cpp_wrapper_codegen() -> type:
    """acc's C++ wrapper over CUDA memory: Inductor's GPU one, since acc:i is
    CUDA device i."""
    from torch._inductor.codegen.cpp_wrapper_gpu import CppWrapperGpu

    return _cpp_wrapper_over(CppWrapperGpu, "cuda")
