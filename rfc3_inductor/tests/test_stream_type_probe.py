"""The probe ``rfc3.stream_type`` compiles the C++ that Inductor's GPU wrapper
writes with ``cpp_stream_type()``: a type the device's launcher does not take
fails, as a guess would (``void*`` for a typed stream), and so does a name
that is no type. A device of a vendor's own, in C++ declarations only."""

from __future__ import annotations

import pytest


def compile_stream_use(*args, **kwargs):
    # Imported when a test runs: --control (stock torch) collects this file
    # without running it, and then nothing has imported the installed slice,
    # so pytest's importlib mode would take this folder for the package.
    from rfc3_inductor import probes

    return probes.compile_stream_use(*args, **kwargs)


class NpuOverrides:
    """The C++ snippets of a GPU-class device whose streams are ``npuStream_t``."""

    def __init__(self, stream_type: str) -> None:
        self.stream_type = stream_type

    def kernel_header(self) -> str:
        return (
            "typedef struct npuStream_st* npuStream_t;\n"
            "typedef struct npuFunction_st* npuFunction_t;\n"
            'extern "C" AOTITorchError npu_get_current_stream(int32_t device, void** stream);\n'
        )

    def kernel_driver(self) -> str:
        return (
            "static inline void launchKernel(npuFunction_t func, uint32_t gridX, uint32_t gridY,\n"
            "    uint32_t gridZ, uint32_t numWarps, uint32_t sharedMemBytes, void* args[],\n"
            "    npuStream_t stream) {}\n"
        )

    def cpp_kernel_type(self) -> str:
        return "npuFunction_t"

    def aoti_get_stream(self) -> str:
        return "npu_get_current_stream"

    def cpp_stream_type(self) -> str:
        return self.stream_type


def test_the_launchers_stream_type_compiles() -> None:
    assert compile_stream_use(NpuOverrides("npuStream_t"), "cpu") is None


@pytest.mark.parametrize(
    ("stream_type", "error"),
    [
        ("void*", "invalid conversion from 'void*' to 'npuStream_t'"),
        ("npu_stream", "'npu_stream'"),
    ],
)
def test_a_wrong_stream_type_does_not_compile(stream_type: str, error: str) -> None:
    found = compile_stream_use(NpuOverrides(stream_type), "cpu")
    assert found is not None and error in found, found
