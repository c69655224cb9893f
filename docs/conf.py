"""Sphinx configuration: MyST pages with executed examples (sphinx.ext.doctest)."""

import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).parent / "_ext"))

project = "PrivateUse1 x torch.compile reference implementations"
author = "torch-rfc maintainers"
copyright = "2026, torch-rfc maintainers"

extensions = ["myst_parser", "sphinx.ext.doctest", "slice_series", "generated_include"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_generated"]
nitpicky = True
html_theme = "alabaster"
html_title = "PrivateUse1 x torch.compile"

# Every example runs against the torch the overlay serves in this process
# (TORCH_RFC_SLICES), on a renamed PrivateUse1 backend.
doctest_global_setup = """
import os
import torch
os.environ.setdefault("TORCH_RFC_BACKEND", "torch_acc")  # also for fresh interpreters
from rfc_shared.testing.backends import ensure_privateuse1_backend
ensure_privateuse1_backend("torch_acc")  # the reference backend
"""
