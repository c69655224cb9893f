"""mgpu's Triton backend (entry point ``triton.backends``): a driver that makes
Triton see mgpu, and a compiler that leaves its kernels to the interpreter."""
