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
