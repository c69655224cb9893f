"""Shared core of the PrivateUse1 x torch.compile reference implementations.

- :mod:`rfc_shared.overlay`: serve torch patched by the installed slices.
- :mod:`rfc_shared.slices`: slice declarations and selection.
- :mod:`rfc_shared.testing`: the pytest plugin the slice tests use.

Importing this package imports nothing else: the startup hook lives in it and
runs in every interpreter of the environment.
"""
