"""``python install.py DIR``: the one command of the build,
``pip install --no-build-isolation .``, into DIR (a folder to put on
PYTHONPATH) instead of the environment, from a copy of the sources in DIR/src
so that the build's files stay there. DIR keeps the build: a second run with
the same sources does nothing."""

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path


here = Path(__file__).resolve().parent
target = Path(sys.argv[1]).resolve()
sources = sorted(p.relative_to(here) for p in here.rglob("*") if p.suffix in {".py", ".cpp"})
digest = hashlib.sha256()
for path in sources:
    digest.update(str(path).encode() + b"\0" + (here / path).read_bytes())
stamp = target / "SOURCES"
if not stamp.exists() or stamp.read_text() != digest.hexdigest():
    for path in sources:
        (target / "src" / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(here / path, target / "src" / path)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-build-isolation",
            "--no-deps",
            "--upgrade",
            "--target",
            str(target),
            str(target / "src"),
        ],
        check=True,
    )
    stamp.write_text(digest.hexdigest())
