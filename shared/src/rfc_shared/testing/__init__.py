"""Testing kit: the pytest plugin, registry snapshots, a PrivateUse1 backend."""
