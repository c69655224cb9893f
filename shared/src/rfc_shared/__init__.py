"""The engine and kits of the PrivateUse1 x torch.compile reference implementations.

A map of the package, by role:

- :mod:`rfc_shared.selection`: ``TORCH_RFC_SLICES``, the one variable that
  selects what the overlay serves.
- :mod:`rfc_shared.overlay`: the overlay engine. Slices (patch series against a
  torch release, declared through entry points) applied in memory and served
  over the installed torch, atomically, with their own Inductor cache.
- :mod:`rfc_shared.authoring`: git work trees to edit a series in, refresh,
  porting to another torch base, ``check-series``, export for upstream.
- :mod:`rfc_shared.conformance`: the conformance probe a vendor runs against
  a PrivateUse1 backend; each slice ships its probes (``<package>.probes``).
- :mod:`rfc_shared.bench`: benchmarks measured side by side as ratios.
- :mod:`rfc_shared.testing`: the opt-in pytest plugin, registry snapshots,
  the backend under test, the compile corpus and test helpers.
- ``python -m rfc_shared``: the command line (status, materialize, workspace,
  refresh, check-series, export).

Importing this package imports nothing else: the startup hook lives in it and
runs in every interpreter of the environment.
"""
