"""Author, regenerate and export slice series with git.

Nobody edits hunks by hand. ``workspace`` makes a git repository seeded with
the pristine torch sources, with the dependency series and the slice applied
as commits; the author edits and commits there; ``refresh`` turns the commits
back into the slice's series; ``export`` writes the series plus the slice's
upstream tests and checks that ``git am`` applies it to a pristine tree.

Series are read from and written to the project's source tree (the
``<slice>/src/<package>/patches`` folders, and a follow-up series' own
folder), not the installed packages.

Porting: ``workspace(..., base=...)`` for a base the slice has no series for
yet replays the slice's primary series onto that base's pristine sources (a
3-way cherry-pick); conflicts stop it, the author resolves them once, and
``refresh(..., base=...)`` writes the new series next to the primary one.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..overlay import Overlay
from ..overlay.base import TorchBase, read_torch_base, torch_package_dir
from ..overlay.roster import Roster, installed
from ..overlay.slices import SERIES_FILE, Slice, SliceError
from . import pristine


class AuthoringError(RuntimeError):
    """A workspace, refresh or export step that cannot proceed."""


class PortConflictError(AuthoringError):
    """Porting a series to another base stopped on conflicts to resolve."""


# Commits made by the tools themselves (the pristine base, the test commit)
# need an identity even on a machine without git configuration.
_TOOL_IDENTITY = {
    "GIT_AUTHOR_NAME": "torch-rfc tools",
    "GIT_AUTHOR_EMAIL": "tools@torch-rfc.invalid",
    "GIT_COMMITTER_NAME": "torch-rfc tools",
    "GIT_COMMITTER_EMAIL": "tools@torch-rfc.invalid",
}
_FORMAT_PATCH = ("format-patch", "--full-index", "--zero-commit", "--no-signature", "-N")


def git(
    repo: Path, *args: str, identity: bool = False, extra_env: dict[str, str] | None = None
) -> str:
    env = dict(os.environ)
    # Never let git walk up into an enclosing repository (the project's own).
    env["GIT_CEILING_DIRECTORIES"] = str(repo.parent)
    if identity:
        env.update(_TOOL_IDENTITY)
    else:
        for key, value in _TOOL_IDENTITY.items():
            if key.startswith("GIT_COMMITTER"):
                env.setdefault(key, value)
    env.update(extra_env or {})
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
    if done.returncode:
        raise AuthoringError(
            f"git {' '.join(args[:3])} failed in {repo}:\n{done.stderr or done.stdout}"
        )
    return done.stdout


def project_root(start: Path | None = None) -> Path:
    """The project folder: the nearest one above ``start`` (default: the
    working directory) holding a ``noxfile.py``."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "noxfile.py").is_file():
            return folder
    raise AuthoringError(f"{here} is not inside the project (no noxfile.py found)")


def slice_source_dir(root: Path, s: Slice) -> Path:
    """The project folder of a slice (the one holding its pyproject.toml).
    The slice's package is found, not its patches folder: a new slice has
    none until its first refresh."""
    found = sorted(d for d in root.glob(f"*/src/{s.package}") if d.is_dir())
    if len(found) != 1:
        raise AuthoringError(
            f"slice {s.name!r}: expected one */src/{s.package} folder under {root}, "
            f"found {len(found)}"
        )
    return found[0].parents[1]  # <folder>/src/<package>


def from_source(root: Path, s: Slice) -> Slice:
    """The slice with its series read from the project tree.

    Its bases are the ``torch-<version>`` folders there, so a freshly ported
    series is usable before the package is installed again.
    """
    patches = slice_source_dir(root, s) / "src" / s.package / s.patches_folder
    return dataclasses.replace(s, patches_root=patches, bases=None)


def source_roster(root: Path, roster: Roster | None = None) -> Roster:
    """The slices of ``roster`` (default: the installed ones) with their
    series read from the project tree."""
    return (roster or installed()).mapped(lambda s: from_source(root, s))


def source_slices(root: Path, name: str, roster: Roster | None = None) -> list[Slice]:
    """``name`` and its dependencies, in stack order, read from the project."""
    return [from_source(root, s) for s in (roster or installed()).closure([name])]


def seed_pristine(repo: Path, torch_dir: Path, base: TorchBase) -> None:
    """Make ``repo`` a git repository holding torch's pristine .py sources,
    and upstream's tests of its landed decisions that the project keeps."""
    repo.mkdir(parents=True, exist_ok=True)
    git(repo, "init", "-q", "-b", "main")
    for source in torch_dir.rglob("*.py"):
        if "__pycache__" in source.parts:
            continue
        target = repo / "torch" / source.relative_to(torch_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    if base.landed_tests_dir.is_dir():
        shutil.copytree(base.landed_tests_dir, repo, dirs_exist_ok=True)
    git(repo, "add", "-A")
    git(
        repo,
        "commit",
        "-q",
        "-m",
        f"Pristine Python sources of {base.version}\n\n"
        f"torch {base.version}, upstream commit {base.git_version}.",
        identity=True,
    )
    git(repo, "tag", "base")


def am(repo: Path, patches: Sequence[Path]) -> None:
    if patches:
        git(repo, "am", "-q", "--keep-cr", "--keep-non-patch", *map(str, patches))


def write_series(folder: Path, patches: Sequence[Path], base: TorchBase) -> None:
    """Replace the series in ``folder`` with ``patches``, in that order."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.patch"):
        old.unlink()
    for patch in patches:
        shutil.copyfile(patch, folder / patch.name)
    listing = [
        f"# Applied in this order to {base}. Regenerated by refresh.",
        *(p.name for p in patches),
    ]
    (folder / SERIES_FILE).write_text("\n".join(listing) + "\n", encoding="utf-8")


def _torch_sources(base: TorchBase | None) -> Path:
    """Pristine sources of ``base``; the installed torch's when None."""
    return torch_package_dir() if base is None else pristine.sources_dir(base)


def workspace(
    name: str,
    dest: Path,
    root: Path | None = None,
    base: TorchBase | None = None,
    port_from: TorchBase | None = None,
    roster: Roster | None = None,
) -> Path:
    """Create the authoring repository for slice ``name`` at ``dest``.

    Args:
        name: The slice to author.
        dest: An empty or missing folder.
        root: The project folder (default: found from the working directory).
        base: The torch release to author against (default: the installed
            one). If the slice has no series for it yet, its primary series
            is ported by a 3-way cherry-pick.
        port_from: Port the series of this base (default: the primary one)
            even when ``base`` has a series, to redo a backport after the
            series it came from changed.
        roster: The slices (default: the installed ones).

    Raises:
        PortConflictError: the port stopped on conflicts; the workspace is
            left mid cherry-pick for the author to resolve.
    """
    root = project_root(root)
    if dest.exists() and any(dest.iterdir()):
        raise AuthoringError(f"{dest} exists; commit your work there and run refresh, or remove it")
    torch_dir = _torch_sources(base)
    base = read_torch_base(torch_dir)
    *deps, target = source_slices(root, name, roster)
    unported = [d.name for d in deps if base not in d.bases]
    if unported:
        raise AuthoringError(
            f"slice {name!r} needs {', '.join(unported)} on {base} first: port "
            f"{'it' if len(unported) == 1 else 'them'} with workspace --base {base.version}"
        )
    seed_pristine(dest, torch_dir, base)
    for dep in deps:
        am(dest, dep.series_files(base))
    git(dest, "tag", "deps")
    if base in target.bases and (port_from is None or port_from == base):
        am(dest, target.series_files(base))
    elif target.bases or port_from is not None:
        _port(dest, deps, target, port_from or target.bases[0])
    # else: a new slice, with no series yet: its first commits go on the deps.
    return dest


def _port(repo: Path, deps: Sequence[Slice], target: Slice, source: TorchBase) -> None:
    """Replay ``target``'s series for ``source`` onto the commits in ``repo``."""
    with _scratch() as tmp:
        replay = tmp / "source"
        seed_pristine(replay, pristine.sources_dir(source), source)
        for dep in deps:
            am(replay, dep.series_files(source))
        git(replay, "tag", "deps")
        am(replay, target.series_files(source))
        git(repo, "fetch", "-q", "--no-tags", str(replay), "main:refs/port/series")
        git(repo, "fetch", "-q", "--no-tags", str(replay), "refs/tags/deps:refs/port/deps")
    git(repo, "config", "merge.conflictStyle", "zdiff3")
    try:
        git(repo, "cherry-pick", "--allow-empty", "refs/port/deps..refs/port/series")
    except AuthoringError as stopped:
        conflicted = git(repo, "diff", "--name-only", "--diff-filter=U").split()
        if not conflicted:
            raise
        subject = git(repo, "log", "-1", "--format=%s", "CHERRY_PICK_HEAD").strip()
        raise PortConflictError(
            f"porting {target.name!r} from {source} stopped at {subject!r}; conflicts in:\n"
            + "".join(f"  {path}\n" for path in conflicted)
            + f"Resolve them in {repo}, `git add` them and `git cherry-pick --continue` "
            "(repeat until done), then run refresh with the same --base."
        ) from stopped


def refresh(
    name: str,
    repo: Path,
    root: Path | None = None,
    base: TorchBase | None = None,
    roster: Roster | None = None,
) -> list[Path]:
    """Regenerate slice ``name``'s series for ``base`` (default: the installed
    torch) from the workspace at ``repo``."""
    root = project_root(root)
    if git(repo, "status", "--porcelain", "--untracked-files=no").strip():
        raise AuthoringError(f"{repo} has uncommitted changes; commit them first")
    torch_dir = _torch_sources(base)
    base = read_torch_base(torch_dir)
    *deps, target = source_slices(root, name, roster)
    target = dataclasses.replace(target, bases=tuple(dict.fromkeys((*target.bases, base))))
    out = target.series_dir(base)
    with tempfile.TemporaryDirectory() as tmp:
        git(repo, *_FORMAT_PATCH, "-o", tmp, "deps..HEAD")
        fresh = sorted(Path(tmp).glob("*.patch"))
        _check_against_workspace(repo, [*deps, target], fresh, base, torch_dir)
        write_series(out, fresh, base)
    return target.series_files(base)


def _check_against_workspace(
    repo: Path, stack: Sequence[Slice], fresh: Sequence[Path], base: TorchBase, torch_dir: Path
) -> None:
    """The overlay built from the regenerated series must reproduce the
    workspace's files exactly."""
    with tempfile.TemporaryDirectory() as tmp:
        write_series(Path(tmp) / base.series_dir_name, fresh, base)
        *deps, target = stack
        candidate = dataclasses.replace(target, patches_root=Path(tmp))
        overlay = Overlay.build([*deps, candidate], torch_dir)
    for path, patched in overlay.files.items():
        if (repo / path).read_text(encoding="utf-8") != patched.text:
            raise AuthoringError(f"regenerated series does not reproduce {path}")


@contextmanager
def _scratch() -> Iterator[Path]:
    # Outside the project tree: git would otherwise see the project's repo.
    with tempfile.TemporaryDirectory(prefix="torch-rfc-") as tmp:
        yield Path(tmp)


def duplicate_definitions(source: str) -> list[str]:
    """Functions or classes defined twice in one scope of ``source`` (what a
    bad 3-way merge of two changes to one class leaves), ignoring overloads
    and property setters/deleters."""
    found = []

    def scan(body: list[ast.stmt], scope: str) -> None:
        seen: set[str] = set()
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                decorators = {ast.unparse(d) for d in getattr(node, "decorator_list", [])}
                exempt = any(
                    d.endswith(("overload", ".setter", ".deleter", ".register")) for d in decorators
                )
                if node.name in seen and not exempt:
                    found.append(f"{scope}{node.name}")
                seen.add(node.name)
                if isinstance(node, ast.ClassDef):
                    scan(node.body, f"{scope}{node.name}.")

    scan(ast.parse(source).body, "")
    return found


def exporter_identity() -> tuple[str, str]:
    """The exporting user's git identity (name, email), as ``git commit`` would
    take it: ``GIT_AUTHOR_NAME``/``GIT_AUTHOR_EMAIL`` or ``user.name``/``user.email``.

    Raises:
        AuthoringError: no identity is configured. An exported series is
            authored by the person who sends it upstream (PyTorch's CLA check
            reads the author), never by a placeholder.
    """
    found = []
    for variable, key in (("GIT_AUTHOR_NAME", "user.name"), ("GIT_AUTHOR_EMAIL", "user.email")):
        value = os.environ.get(variable, "").strip()
        if not value:
            done = subprocess.run(["git", "config", key], capture_output=True, text=True)
            value = done.stdout.strip()
        if not value:
            raise AuthoringError(
                f"no git identity to author the export: set {key} (git config --global "
                f"{key} ...) or {variable}"
            )
        found.append(value)
    return found[0], found[1]


def export(
    name: str, out_dir: Path, root: Path | None = None, roster: Roster | None = None
) -> Path:
    """Write slice ``name`` as a ``git am``-able series authored by the
    exporting user, check it on a pristine base tree, and return the folder.

    The series is the one for the installed torch (the primary base in the
    project's environment); its patches carry their own tests under ``test/``.
    """
    root = project_root(root)
    author, email = exporter_identity()
    torch_dir = torch_package_dir()
    base = read_torch_base(torch_dir)
    *deps, target = source_slices(root, name, roster)
    dest = out_dir / name
    with _scratch() as tmp:
        repo = tmp / "build"
        seed_pristine(repo, torch_dir, base)
        for dep in deps:
            am(repo, dep.series_files(base))
        git(repo, "tag", "deps")
        am(repo, target.series_files(base))
        # Authored by the exporting user; the stored series keeps whoever
        # refreshed it last.
        git(
            repo,
            "rebase",
            "-q",
            "--exec",
            "git commit -q --amend --no-edit --reset-author",
            "deps",
            extra_env={"GIT_AUTHOR_NAME": author, "GIT_AUTHOR_EMAIL": email},
        )
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        git(repo, *_FORMAT_PATCH, "-o", str(dest), "deps..HEAD")
        exported = sorted(dest.glob("*.patch"))
        if not exported:
            raise SliceError(f"slice {name!r} has no patches to export")
        check = tmp / "check"
        seed_pristine(check, torch_dir, base)
        for dep in deps:
            am(check, dep.series_files(base))
        git(check, "tag", "deps")
        am(check, exported)
        twice = []
        for path in git(check, "diff", "--name-only", "deps", "HEAD").split():
            if not path.endswith(".py"):
                continue
            try:
                before = git(check, "show", f"deps:{path}")
            except AuthoringError:  # a file the series creates
                before = ""
            after = (check / path).read_text(encoding="utf-8")
            old = set(duplicate_definitions(before)) if before else set()
            twice += [f"{path}: {n}" for n in duplicate_definitions(after) if n not in old]
        if twice:
            raise AuthoringError(f"the exported series defines twice: {', '.join(twice)}")
    depends = "\n".join(f"- {d.name} {d.version}: {d.title}" for d in deps) or "- none"
    (dest / "README.md").write_text(
        f"# {target.name} {target.version}: {target.title}\n\n"
        f"Base: {base}. Author: {author} <{email}>.\n\n"
        "Apply on a PyTorch checkout at that commit, after the series of the "
        f"slices it depends on:\n\n{depends}\n\n"
        f"```\ngit am -3 {dest.name}/*.patch\n```\n\n"
        "Each patch carries its tests under `test/` and ends with a `Test Plan:`. "
        "Checked: `git am` applies this series to pristine sources of the base.\n",
        encoding="utf-8",
    )
    return dest


def materialize(dest: Path, slices: Sequence[Slice]) -> list[str]:
    """Write the pristine torch .py tree with ``slices`` applied to ``dest``.

    Returns the repository-relative paths the overlay changed.
    """
    torch_dir = torch_package_dir()
    overlay = Overlay.build(slices, torch_dir)
    for source in torch_dir.rglob("*.py"):
        if "__pycache__" in source.parts:
            continue
        target = dest / "torch" / source.relative_to(torch_dir)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    for path, patched in overlay.files.items():
        target = dest / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(patched.text, encoding="utf-8")
    return sorted(overlay.files)
