"""Stock torch, each slice alone and the stack never read each other's compiled
artifacts.

Inductor's cache keys hash torch's files on disk, which the overlay leaves as
they are, so only the cache directory keeps the overlays apart: each column's
directory is named after its overlay's series hash. Every column's directory
must differ from every other's; that each process really compiles into and
reads from its column's directory is shown end to end for stock torch, one
slice and the stack. The proof plants a stale artifact: after a column
compiles a function, every generated module in that column's cache is
rewritten to return a wrong answer. A column that reads another column's
cache gets the wrong answer. Each column's process then compiles the
function again from its cache on disk, which shows that the planted
artifacts are real (each column does read its own); a fresh process of the
first and the last column at the end shows that a later process reads them
too.
"""

from __future__ import annotations

import os
from pathlib import Path

from rfc_shared.testing.helpers import last_json, run_python


# A matrix product: Inductor's generated module calls ATen's kernel, so no C++
# kernel (nor the precompiled header, rebuilt under each TMPDIR) is compiled.
# The second compile forgets what the process loaded (Dynamo's code, Inductor's
# modules in memory) and reads the cache on disk, after the plant.
COMPILE = """
import json, torch
from pathlib import Path
from torch._inductor.runtime.cache_dir_utils import cache_dir
from torch._inductor.utils import clear_caches

x = torch.arange(4.0).reshape(2, 2)

def compile_and_run():
    torch._dynamo.reset()
    clear_caches()
    return torch.compile(lambda x: torch.mm(x, x))(x).flatten().tolist()

PLANT = '''

_planted_call = call


def call(args):  # planted: a stale artifact with a wrong answer
    result = _planted_call(args)
    result[0].fill_(-7.0)
    return result
'''

def plant():
    planted = 0
    for path in Path(cache_dir()).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "def call(" in text and "planted" not in text:
            path.write_text(text + PLANT, encoding="utf-8")
            planted += 1
    return planted

first = compile_and_run()
planted = plant() if PLANTING else 0
again = compile_and_run() if PLANTING else first
print(json.dumps([cache_dir(), first, planted, again]))
"""

RIGHT = [2.0, 3.0, 6.0, 11.0]
PLANTED = [-7.0] * 4


def _compile(column: str, tmp: Path, plant: bool) -> tuple[str, list[float], int, list[float]]:
    env = {
        "TORCH_RFC_SLICES": column,
        "TMPDIR": str(tmp),  # every default cache directory lives under it
        "TORCHINDUCTOR_CACHE_DIR": None,
        "TRITON_CACHE_DIR": None,
    }
    return last_json(run_python(f"PLANTING = {plant}\n{COMPILE}", env=env))


def _columns() -> list[str]:
    """Stock torch, each installed slice alone, and the stack."""
    from rfc_shared.overlay.roster import installed

    return ["none", *sorted(installed().names()), "all"]


def _cache_dir_name(column: str) -> str:
    """The name of the Inductor cache directory ``column``'s overlay points
    Inductor at (stock torch: Inductor's own default)."""
    from rfc_shared import selection
    from rfc_shared.overlay.activation import Overlay
    from rfc_shared.overlay.base import installed_torch_base
    from rfc_shared.overlay.cachedirs import overlay_cache_dir
    from rfc_shared.overlay.roster import installed

    names = selection.parse(column)
    if names == []:
        return ""
    slices = installed().select(names, installed_torch_base())
    return os.path.basename(overlay_cache_dir(Overlay.build(slices).series_hash))


def test_every_column_has_a_cache_directory_of_its_own() -> None:
    names = {column: _cache_dir_name(column) for column in _columns()}
    assert len(set(names.values())) == len(names), names


# Stock torch, a slice that changes Inductor's generated code, and the stack.
PLANTED_COLUMNS = ["none", "rfc3", "all"]


def test_a_stale_artifact_of_one_column_is_never_read_by_another(tmp_path: Path) -> None:
    caches: dict[str, str] = {}
    for column in PLANTED_COLUMNS:
        cache, out, planted, again = _compile(column, tmp_path, plant=True)
        assert out == RIGHT, f"{column} read a planted artifact of {list(caches)}"
        assert cache not in caches.values(), f"{column} shares a cache directory"
        assert os.path.commonpath([cache, str(tmp_path)]) == str(tmp_path)
        if column != "none":
            assert os.path.basename(cache) == _cache_dir_name(column), column
        caches[column] = cache
        assert planted >= 1, f"nothing generated in {cache}"
        assert again == PLANTED, f"{column} did not read its own cache"
    for column in (PLANTED_COLUMNS[0], PLANTED_COLUMNS[-1]):  # and a later process reads it
        cache, out, _, _ = _compile(column, tmp_path, plant=False)
        assert (cache, out) == (caches[column], PLANTED), column
