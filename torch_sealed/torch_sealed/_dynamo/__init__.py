"""sealed's compile-time device description, which
``torch.sealed.get_device_interface()`` hands Dynamo's device registry.

Nothing in this package imports ``torch._dynamo``.
"""
