"""Both example backends and the C++ device they share, built with
``pip install --no-build-isolation .`` (it builds against the torch installed)."""

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension


setup(
    name="minimal-devices",
    version="0.1",
    packages=["minimal_common", "minimal_host", "minimal_gpu", "minimal_gpu_triton"],
    ext_modules=[CppExtension("minimal_device", ["csrc/device.cpp"])],
    cmdclass={"build_ext": BuildExtension},
    # Triton finds its backends through this entry point: name -> package
    # holding a compiler.py and a driver.py.
    entry_points={"triton.backends": ["mgpu = minimal_gpu_triton"]},
)
