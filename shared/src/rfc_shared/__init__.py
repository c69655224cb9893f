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
  a PrivateUse1 backend, and everything it needs at run time: the backend
  under test, registry snapshots, the compile corpus and its report, the
  Dynamo programs; each slice ships its probes (``<package>.probes``).
- :mod:`rfc_shared.bench`: benchmarks measured side by side as ratios.
- :mod:`rfc_shared.testing`: for tests only: the opt-in pytest plugin, test
  helpers (throwaway slices, fresh interpreters), the monkeypatch scan, the
  upstream tests. It may import :mod:`rfc_shared.conformance`, never the
  other way round.
- ``python -m rfc_shared``: the command line (status, materialize, workspace,
  refresh, check-series, export).

Importing this package imports nothing else: the startup hook lives in it and
runs in every interpreter of the environment.
"""
