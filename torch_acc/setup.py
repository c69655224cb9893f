"""Builds acc's C++ extensions against the torch installed in the build
environment (install with --no-build-isolation):

- ``torch_acc._C``: acc over host memory (always);
- ``torch_acc._C_cuda``: acc over CUDA memory, when torch and the build
  machine have CUDA (``TORCH_ACC_BUILD_CUDA=0`` skips it).
"""

import os
from pathlib import Path

import torch
from setuptools import setup
from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CppExtension, CUDAExtension


HERE = Path(__file__).parent
FLAGS = ["-O2", "-Wall", "-Wno-unused-parameter"]


def sources(*folders: str) -> list[str]:
    return sorted(str(p.relative_to(HERE)) for f in folders for p in (HERE / f).glob("*.cpp"))


extensions = [CppExtension("torch_acc._C", sources("csrc", "csrc/host"), extra_compile_args=FLAGS)]
if (
    os.environ.get("TORCH_ACC_BUILD_CUDA", "1") != "0"
    and torch.version.cuda is not None
    and CUDA_HOME is not None
):
    extensions.append(
        CUDAExtension(
            "torch_acc._C_cuda",
            sources("csrc", "csrc/cuda"),
            define_macros=[("TORCH_ACC_CUDA", None)],
            extra_compile_args={"cxx": FLAGS, "nvcc": ["-O2"]},
        )
    )

setup(ext_modules=extensions, cmdclass={"build_ext": BuildExtension})
