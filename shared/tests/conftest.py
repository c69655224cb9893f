from pathlib import Path

import pytest


@pytest.fixture
def slices_root(tmp_path: Path) -> Path:
    root = tmp_path / "slices"
    root.mkdir()
    return root
