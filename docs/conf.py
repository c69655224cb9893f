"""Sphinx configuration: MyST pages with executed examples (sphinx.ext.doctest)."""

import sys
from pathlib import Path

from rfc_shared.overlay.base import KNOWN_BASES, PRIMARY_BASE


sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "PrivateUse1 x torch.compile reference implementations"
author = "torch-rfc maintainers"
copyright = "2026, torch-rfc maintainers"

extensions = [
    "myst_parser",
    "sphinx.ext.doctest",
    "sphinx_copybutton",
    "slice_series",
    "generated_include",
    "bench_figures",
    "table_breaks",
]
myst_enable_extensions = ["colon_fence", "deflist", "substitution"]

# The bases as the engine declares them ({{ primary_base }}, {{ backport_bases }}),
# so that no page types a release the project may move past.
myst_substitutions = {
    "primary_base": PRIMARY_BASE.version,
    "backport_bases": " and ".join(b.version for b in KNOWN_BASES if b is not PRIMARY_BASE),
}
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_generated"]
nitpicky = True

# PyTorch's own docs theme. The header carries no page links (the titles are
# long); the left sidebar lists the whole toctree, grouped by its captions, on
# every page, then the page's sections: no right sidebar, so that wide tables
# and code have the width at 1280 px (_static/layout.css). What is still wider
# scrolls in its own box (docs/tests/test_layout.py).
html_theme = "pydata_sphinx_theme"
html_title = "PrivateUse1 x torch.compile"
templates_path = ["_templates"]
html_static_path = ["_static"]
html_css_files = ["layout.css"]
html_sidebars = {"**": ["sidebar-nav-all.html", "page-toc.html"]}
html_theme_options = {
    "navbar_center": [],
    "navbar_end": ["theme-switcher"],
    "navbar_persistent": ["search-button"],
    "secondary_sidebar_items": [],
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_center": [],
    "footer_end": ["sphinx-version"],
}

# Copy buttons copy the commands of console and doctest blocks, not their
# prompts or output.
copybutton_prompt_text = r">>> |\.\.\. |\$ "
copybutton_prompt_is_regexp = True

# Every example runs against the torch the overlay serves in this process
# (TORCH_RFC_SLICES), on a renamed PrivateUse1 backend.
doctest_global_setup = """
import os
import torch
os.environ.setdefault("TORCH_RFC_BACKEND", "torch_acc")  # also for fresh interpreters
from rfc_shared.conformance.backend import ensure_privateuse1_backend
ensure_privateuse1_backend("torch_acc")  # the reference backend
"""
