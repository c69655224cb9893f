"""The overlay end to end: in a fresh interpreter where the startup hook, an
import of torch or a real slice is the point, in this one (an
:class:`Activation` of the test's own, over a :class:`Roster` of the test's
slices) where a patch serves modules this process has not imported."""

from __future__ import annotations

import importlib
import inspect
import json
import linecache
import os
import sys
from pathlib import Path

import pytest

from rfc_shared import overlay, selection
from rfc_shared.overlay import Activation, Overlay, OverlayError, PatchApplyError
from rfc_shared.overlay.base import TorchBase, installed_torch_base
from rfc_shared.overlay.roster import Roster
from rfc_shared.overlay.slices import BaseMismatchError
from rfc_shared.testing.helpers import (
    format_patch,
    last_json,
    overlay_footprint,
    pristine,
    run_python,
    write_slice,
)
from rfc_shared.testing.upstream import write_landed_tests


DI = "torch/_dynamo/device_interface.py"
PRIMITIVE = "register_interface_for_device_PrivateUse1"


def test_patched_module_keeps_its_file_and_shows_patched_source() -> None:
    done = run_python(
        f"""
        import inspect, json, linecache, traceback
        import torch
        import torch._dynamo.device_interface as di

        fn = di.{PRIMITIVE}
        on_disk = open(di.__file__).read()
        shown = inspect.getsource(di)
        linecache.clearcache()  # Inductor does this when it loads kernels
        try:
            fn("cuda", di.CpuInterface)
        except ValueError:
            tb = traceback.format_exc()
        print(json.dumps({{
            "file": di.__file__,
            "co_filename": fn.__code__.co_filename,
            "torch_dir": torch.__path__[0],
            "on_disk": "{PRIMITIVE}" in on_disk,
            "shown": "{PRIMITIVE}" in shown,
            "after_clear": "{PRIMITIVE}" in inspect.getsource(di),
            "traceback": tb,
        }}))
        """,
        slices="registry_core",
    )
    info = last_json(done)
    expected = str(Path(info["torch_dir"]) / "_dynamo" / "device_interface.py")
    assert info["file"] == info["co_filename"] == expected
    assert not info["on_disk"], "the overlay must not write to torch's files"
    assert info["shown"] and info["after_clear"]
    assert "is a built-in device type" in info["traceback"]
    assert f'File "{expected}"' in info["traceback"]


def test_none_serves_stock_torch() -> None:
    done = run_python(
        f"""
        import json, sys
        import torch._dynamo.device_interface as di
        from rfc_shared import overlay
        print(json.dumps([hasattr(di, "{PRIMITIVE}"), overlay.report()["active"],
                          [type(f).__name__ for f in sys.meta_path]]))
        """,
        slices="none",
    )
    has_primitive, active, finders = last_json(done)
    assert not has_primitive and not active
    assert "_OverlayOnTorchImport" not in " ".join(map(str, finders))


def test_report_names_slices_versions_and_series_hash() -> None:
    done = run_python(
        """
        import json, torch
        from rfc_shared import overlay
        print(json.dumps(overlay.report()))
        """,
        slices="registry_core",
    )
    report = last_json(done)
    assert report["active"] is True
    assert report["slices"] == [{"name": "registry_core", "version": "0.1.0"}]
    assert len(report["series_hash"]) == 64
    assert "torch._dynamo.device_interface" in report["modules"]
    assert report["torch"]["git_version"] == installed_torch_base().git_version


def test_a_failing_hunk_raises_and_patches_nothing(tmp_path: Path) -> None:
    utils = pristine("torch/_dynamo/utils.py")
    good = format_patch("torch/_dynamo/utils.py", utils, utils + "OVERLAID = True\n")
    bad = format_patch(DI, "no such\ncontext\n", "x\n")
    broken = write_slice(tmp_path, "broken", [good + bad.split("---\n", 1)[1]])
    activation = Activation(Roster([broken]))
    meta_path = list(sys.meta_path)
    with pytest.raises(PatchApplyError) as info:
        activation.activate(["broken"])
    error = str(info.value)
    assert "slice 'broken'" in error and "0001-change.patch" in error
    assert DI in error and "hunk #1" in error
    assert activation.overlay is None and activation.report()["active"] is False
    assert sys.meta_path == meta_path  # nothing serves any of it


def test_wrong_torch_version_is_refused(tmp_path: Path) -> None:
    old = write_slice(tmp_path, "old", [], base=TorchBase("2.12.0", "0" * 40))
    activation = Activation(Roster([old]))
    with pytest.raises(BaseMismatchError) as info:
        activation.activate(["old"])
    assert f"torch {installed_torch_base().version}" in str(info.value)
    assert "torch 2.12.0" in str(info.value) and activation.overlay is None


def _fake_distribution(site: Path, root: Path) -> None:
    """An installed distribution declaring a slice whose series does not apply."""
    package = site / "broken_slice"
    base = installed_torch_base()
    series = package / "patches" / base.series_dir_name
    series.mkdir(parents=True)
    (series / "0001-bad.patch").write_text(
        "Subject: [PATCH] bad\n\n---\n"
        "diff --git a/torch/_dynamo/utils.py b/torch/_dynamo/utils.py\n"
        "--- a/torch/_dynamo/utils.py\n+++ b/torch/_dynamo/utils.py\n"
        "@@ -1,2 +1,2 @@\n-no such\n+line\n context\n"
    )
    (series / "series").write_text("0001-bad.patch\n")
    (package / "__init__.py").write_text(
        "from rfc_shared.overlay.base import TorchBase\n"
        "from rfc_shared.overlay.slices import Slice\n"
        f"SLICE = Slice('broken', 'broken_slice', "
        f"(TorchBase({base.version!r}, {base.git_version!r}),))\n"
    )
    info = site / "broken_slice-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-slice\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[torch_rfc.slices]\nbroken = broken_slice:SLICE\n")


def test_startup_failure_fails_every_torch_import(tmp_path: Path) -> None:
    _fake_distribution(tmp_path, tmp_path)
    done = run_python(
        """
        import json
        errors = []
        for attempt in range(2):
            try:
                import torch
            except Exception as e:
                errors.append(f"{type(e).__name__}: {e}")
        print(json.dumps(errors))
        """,
        slices="broken",
        env={"PYTHONPATH": str(tmp_path)},
    )
    first, second = last_json(done)
    assert first.startswith("PatchApplyError: slice 'broken': patch 0001-bad.patch")
    assert second.startswith("OverlayError: the torch overlay failed to activate")


def test_activating_after_torch_was_imported_is_refused(tmp_path: Path) -> None:
    import torch._dynamo.utils  # noqa: F401  (stock or served by this process's overlay)

    utils = pristine("torch/_dynamo/utils.py")
    changes = write_slice(
        tmp_path, "changes", [format_patch("torch/_dynamo/utils.py", utils, utils + "X = 1\n")]
    )
    activation = Activation(Roster([changes]))
    with pytest.raises(OverlayError, match="already imported: torch._dynamo.utils"):
        activation.activate(["changes"])
    assert activation.overlay is None


def test_cache_directories_differ_between_stock_and_overlaid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_in_a_fresh_interpreter: None
) -> None:
    from torch._inductor.runtime.cache_dir_utils import cache_dir, triton_cache_dir

    def chosen_by_torch() -> list[str]:
        found = [cache_dir(), triton_cache_dir(0)]
        monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)  # cache_dir() sets it
        return found

    monkeypatch.delenv("TRITON_CACHE_DIR", raising=False)
    added = format_patch("torch/_dynamo/rfc_added_6.py", None, "VALUE = 6\n")
    activation = Activation(Roster([write_slice(tmp_path, "adds", [added])]))
    stock = chosen_by_torch()
    with activation.activated(["adds"]):
        overlaid = chosen_by_torch()
    assert stock != overlaid and stock == chosen_by_torch()
    assert "_rfc-" in overlaid[0] and overlaid[1].startswith(overlaid[0])

    chosen = str(tmp_path / "mine")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", chosen)
    with activation.activated(["adds"]):
        assert cache_dir() == chosen
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == chosen


def test_subprocesses_get_the_same_overlay() -> None:
    done = run_python(
        """
        import json, subprocess, sys
        from rfc_shared import overlay
        overlay.activate(["registry_core"])
        child = subprocess.run(
            [sys.executable, "-c",
             "import json, torch; from rfc_shared import overlay; "
             "print(json.dumps(overlay.report()['slices']))"],
            capture_output=True, text=True, check=True)
        print(child.stdout.strip().splitlines()[-1])
        """,
        slices="none",
    )
    assert last_json(done) == [{"name": "registry_core", "version": "0.1.0"}]


def test_bytecode_is_cached_outside_torch_and_a_bad_entry_is_ignored(tmp_path: Path) -> None:
    code = """
        import torch._dynamo.device_interface as di
        print(hasattr(di, "register_interface_for_device_PrivateUse1"))
    """
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    assert run_python(code, slices="registry_core", env=env).stdout.split()[-1] == "True"
    cached = list((tmp_path / "torch-rfc" / "bytecode").glob("*.bin"))
    assert cached  # one entry per module the slice serves
    for entry in cached:
        entry.write_bytes(b"not bytecode")
    assert run_python(code, slices="registry_core", env=env).stdout.split()[-1] == "True"


def test_a_file_a_patch_creates_is_served_as_a_module(tmp_path: Path) -> None:
    added = format_patch("torch/_dynamo/rfc_added.py", None, "VALUE = 42\n")
    # Not this process's own activation, which may serve torch already.
    activation = Activation(Roster([write_slice(tmp_path, "adds", [added])]))
    try:
        with activation.activated(["adds"]) as served:
            assert list(served.modules) == ["torch._dynamo.rfc_added"]
            module = importlib.import_module("torch._dynamo.rfc_added")
            assert module.VALUE == 42 and "VALUE = 42" in inspect.getsource(module)
            assert module.__file__.endswith("torch/_dynamo/rfc_added.py")
            # Unimported before deactivating: nothing of it is kept.
            sys.modules.pop("torch._dynamo.rfc_added")
        # Deactivated: later imports no longer find it.
        with pytest.raises(ModuleNotFoundError):
            importlib.import_module("torch._dynamo.rfc_added")
        assert activation.finder is None and activation.finder not in sys.meta_path
    finally:
        sys.modules.pop("torch._dynamo.rfc_added", None)


def test_deactivating_restores_the_selection_subprocesses_see(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    added = format_patch("torch/_dynamo/rfc_added_too.py", None, "VALUE = 1\n")
    monkeypatch.setenv(selection.ENV, "none")
    activation = Activation(Roster([write_slice(tmp_path, "adds", [added])]))
    with activation.activated(["adds"]):
        assert os.environ[selection.ENV] == "adds"
        assert activation.report()["slices"] == [{"name": "adds", "version": "0.0.1"}]
    assert os.environ[selection.ENV] == "none"
    assert activation.report()["active"] is False


FRESH_FOOTPRINT = """
    import json
    from rfc_shared.overlay import ACTIVATION
    from rfc_shared.testing.helpers import overlay_footprint
    print(json.dumps(overlay_footprint(ACTIVATION)))
"""


@pytest.fixture
def as_in_a_fresh_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's environment as the fresh interpreter below gets it; the
    process's own overlay must not be serving."""
    if overlay.active() is not None:
        pytest.skip("this process's own overlay serves torch")
    monkeypatch.setenv(selection.ENV, "none")
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)


def test_deactivating_undoes_what_activating_did(
    tmp_path: Path, as_in_a_fresh_interpreter: None
) -> None:
    patches = [
        format_patch(f"torch/_dynamo/rfc_added_{n}.py", None, f"VALUE = {n}\n") for n in (3, 4)
    ]
    activation = Activation(Roster([write_slice(tmp_path, "adds", patches)]))
    before = overlay_footprint(activation)
    activation.settled = True  # as the startup hook leaves it
    try:
        with activation.activated(["adds"]):
            assert "_rfc-" in os.environ["TORCHINDUCTOR_CACHE_DIR"]
            three = importlib.import_module("torch._dynamo.rfc_added_3")
            four = importlib.import_module("torch._dynamo.rfc_added_4")
            assert not overlay_footprint(activation)["clearcache_is_stdlib"]
            del sys.modules["torch._dynamo.rfc_added_3"]  # as if never imported
        # The module still imported keeps its patched text for tracebacks, and
        # the report names it; the other's text is gone.
        after = overlay_footprint(activation)
        assert after["patched_text"] == [four.__file__]
        assert three.__file__ not in linecache.cache and four.__file__ in linecache.cache
        assert after["report"]["patched_modules_still_imported"] == ["torch._dynamo.rfc_added_4"]
        del sys.modules["torch._dynamo.rfc_added_4"]
        with activation.activated(["adds"]):
            importlib.import_module("torch._dynamo.rfc_added_3")
            del sys.modules["torch._dynamo.rfc_added_3"]
        assert overlay_footprint(activation) == before
    finally:
        for n in (3, 4):
            sys.modules.pop(f"torch._dynamo.rfc_added_{n}", None)


def test_activating_and_deactivating_leaves_what_a_fresh_interpreter_has(
    tmp_path: Path, as_in_a_fresh_interpreter: None
) -> None:
    fresh = last_json(run_python(FRESH_FOOTPRINT, slices="none"))
    added = format_patch("torch/_dynamo/rfc_added_5.py", None, "VALUE = 5\n")
    activation = Activation(Roster([write_slice(tmp_path, "adds", [added])]))
    try:
        with activation.activated(["adds"]):
            importlib.import_module("torch._dynamo.rfc_added_5")
            del sys.modules["torch._dynamo.rfc_added_5"]
    finally:
        sys.modules.pop("torch._dynamo.rfc_added_5", None)
    assert json.loads(json.dumps(overlay_footprint(activation))) == fresh


def test_a_slice_that_imports_torch_at_import_gets_a_clear_error(tmp_path: Path) -> None:
    _fake_distribution(tmp_path, tmp_path)
    init = tmp_path / "broken_slice" / "__init__.py"
    init.write_text("import torch\n" + init.read_text())
    done = run_python(
        """
        import json
        try:
            import torch
        except Exception as e:
            print(json.dumps(f"{type(e).__name__}: {e}"))
        """,
        slices="broken",
        env={"PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])},
    )
    error = last_json(done)
    assert error.startswith(
        "OverlayError: torch was imported while the overlay was being activated: "
        "slice 'broken' (broken_slice:SLICE) (or what it imports) imports torch"
    )
    assert "partially initialized" not in error


def test_a_patch_changes_an_upstream_test_of_a_landed_decision(tmp_path: Path) -> None:
    # Upstream's test files are not in a wheel: the project keeps those that
    # pin landed decisions, and a patch that changes the decision changes them.
    path = "test/inductor/test_device_backends.py"
    kept = installed_torch_base().landed_tests_dir / path
    old = kept.read_text(encoding="utf-8")
    new = old.replace('device = "fakedevice"', 'device = "otherdevice"')
    changes = write_slice(tmp_path, "changes", [format_patch(path, old, new)])

    assert Overlay.build([changes]).tests[path].text == new
    written = write_landed_tests([changes], tmp_path / "landed")
    assert (written / path).read_text(encoding="utf-8") == new
    stock = write_landed_tests([], tmp_path / "stock")
    assert (stock / path).read_text(encoding="utf-8") == old
    assert sorted(p.name for p in (stock / "test" / "inductor").iterdir()) == [
        "test_device_backends.py",
        "test_utils.py",
    ]


def test_a_build_is_stored_and_used_again_until_a_pristine_file_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rfc_shared.overlay import activation

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    base = installed_torch_base()
    torch_dir = tmp_path / "site" / "torch"
    (torch_dir / "_dynamo").mkdir(parents=True)
    (torch_dir / "version.py").write_text(
        f"__version__ = {base.version!r}\ngit_version = {base.git_version!r}\n"
    )
    utils = torch_dir / "_dynamo" / "utils.py"
    utils.write_text("A = 1\n")
    change = format_patch("torch/_dynamo/utils.py", "A = 1\n", "A = 2\n")
    changes = write_slice(tmp_path / "slices", "changes", [change])

    built = Overlay.build([changes], torch_dir)
    assert built.modules["torch._dynamo.utils"].text == "A = 2\n"

    def applies_nothing(*args: object) -> str:
        raise AssertionError("applied a hunk again")

    with monkeypatch.context() as m:
        m.setattr(activation, "apply_hunks", applies_nothing)
        again = Overlay.build([changes], torch_dir)
    assert again.files == built.files and again.series_hash == built.series_hash

    for entry in (tmp_path / "cache").rglob("overlays/*.bin"):
        entry.write_bytes(b"not an overlay")  # unreadable: built again
    assert Overlay.build([changes], torch_dir).files == built.files

    from rfc_shared.overlay import buildcache

    monkeypatch.setattr(buildcache, "KEPT", 1)
    Overlay.build([], torch_dir)  # another selection's build: the oldest entry goes
    assert len(list((tmp_path / "cache").rglob("overlays/*.bin"))) == 1

    utils.write_text("A = 10\n")  # the pristine file changed: build again, and fail
    with pytest.raises(PatchApplyError, match="hunk #1"):
        Overlay.build([changes], torch_dir)
