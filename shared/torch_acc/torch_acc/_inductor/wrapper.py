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


def cpp_wrapper_codegen() -> type:
    """acc's C++ wrapper for host mode: Inductor's CPU one, with the CPU's
    wrapper header and C shims, since acc memory is host memory."""
    from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu

    class AccCppWrapperCpu(CppWrapperCpu):
        @staticmethod
        def create(
            is_subgraph: bool,
            subgraph_name: str | None,
            parent_wrapper: PythonWrapperCodegen | None,
            partition_signatures: ir.GraphPartitionSignature | None = None,
        ) -> PythonWrapperCodegen:
            return AccCppWrapperCpu()

        @staticmethod
        def get_device_include_path_jit(device: str) -> str:
            return CppWrapperCpu.get_device_include_path_jit("cpu")

        @staticmethod
        def get_device_include_path_aot(device: str) -> str:
            return CppWrapperCpu.get_device_include_path_aot("cpu")

        @staticmethod
        def get_c_shim_func_name(kernel: str, device: str) -> str:
            # There are no acc C shims; the CPU's run on acc's host memory.
            return CppWrapperCpu.get_c_shim_func_name(kernel, "cpu" if device == "acc" else device)

    return AccCppWrapperCpu


def cuda_cpp_wrapper_codegen() -> type:
    """acc's C++ wrapper over CUDA memory: Inductor's GPU one, with CUDA's
    wrapper header and C shims, since acc:i is CUDA device i."""
    from torch._inductor.codegen.cpp_wrapper_gpu import CppWrapperGpu

    def on_cuda(device: str) -> str:
        return "cuda" if device == "acc" else device

    class AccCppWrapperGpu(CppWrapperGpu):
        @staticmethod
        def create(
            is_subgraph: bool,
            subgraph_name: str | None,
            parent_wrapper: PythonWrapperCodegen | None,
            partition_signatures: ir.GraphPartitionSignature | None = None,
        ) -> PythonWrapperCodegen:
            return AccCppWrapperGpu()

        # torch 2.13 names the header by mode (jit/aot), 2.11 by device alone.
        @staticmethod
        def get_device_include_path(device: str) -> str:
            return CppWrapperGpu.get_device_include_path(on_cuda(device))

        @staticmethod
        def get_device_include_path_jit(device: str) -> str:
            return CppWrapperGpu.get_device_include_path_jit(on_cuda(device))

        @staticmethod
        def get_device_include_path_aot(device: str) -> str:
            return CppWrapperGpu.get_device_include_path_aot(on_cuda(device))

        @staticmethod
        def get_c_shim_func_name(kernel: str, device: str) -> str:
            return CppWrapperGpu.get_c_shim_func_name(kernel, on_cuda(device))

    return AccCppWrapperGpu
