"""Triton backend ``acc`` (entry point ``triton.backends``).

Its driver makes Triton, and Inductor through it, see the acc device; its
compiler builds no machine code: acc runs Triton kernels through Triton's
interpreter (``TRITON_INTERPRET=1``) on host memory. This package stays apart
from ``torch_acc`` so that Triton's backend discovery imports nothing heavy.
"""
