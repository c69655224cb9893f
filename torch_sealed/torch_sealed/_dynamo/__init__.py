"""sealed's compile-time device description, found by convention.

Nothing in this package imports ``torch._dynamo``.
"""
