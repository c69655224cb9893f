"""``{generated-include} NAME``: include ``_generated/NAME`` when the build has
it. ``nox -s docs`` generates it first; a build of a single page (a slice
session's doctest) does not need it and says so on the page instead."""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


class GeneratedInclude(SphinxDirective):
    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        path = Path(self.env.srcdir) / "_generated" / self.arguments[0]
        if not path.exists():
            return [nodes.paragraph(text=f"({path.name} was not generated in this build.)")]
        self.env.note_dependency(str(path))
        return self.parse_text_to_nodes(path.read_text(encoding="utf-8"))


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("generated-include", GeneratedInclude)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
