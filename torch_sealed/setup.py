"""Builds sealed's C++ extension ``torch_sealed._C`` against the torch installed
in the build environment (install with --no-build-isolation)."""

from pathlib import Path

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension


HERE = Path(__file__).parent
SOURCES = sorted(str(p.relative_to(HERE)) for p in (HERE / "csrc").glob("*.cpp"))

setup(
    ext_modules=[
        CppExtension(
            "torch_sealed._C",
            SOURCES,
            extra_compile_args=["-O2", "-Wall", "-Wno-unused-parameter"],
        )
    ],
    cmdclass={"build_ext": BuildExtension},
)
