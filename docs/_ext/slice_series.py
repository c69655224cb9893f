"""``{slice-series} NAME``: render a slice's patch series from the source tree.

The series for the slice's primary base is shown whole; each port to another
base is listed by its patches' subjects. The docs show the series that is
applied and exported, never a copy of it.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

from rfc_shared.authoring import from_source, project_root
from rfc_shared.overlay.patchfile import read_patch
from rfc_shared.overlay.roster import installed


class SliceSeries(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        roster = installed()
        if name not in roster:
            raise self.error(f"unknown slice {name!r}")
        source = from_source(project_root(self.env.srcdir), roster[name])
        primary, *ports = source.bases
        files = source.series_files(primary)
        out: list[nodes.Node] = [
            nodes.paragraph(text=f"The series against {primary}, as exported:")
        ]
        if not files:
            out.append(nodes.paragraph(text=f"The series of slice {name} is empty so far."))
        for file in files:
            self.env.note_dependency(str(file))
            patch = read_patch(file)
            out.append(nodes.rubric(text=f"{file.name}: {patch.subject}"))
            text = patch.raw.decode("utf-8")
            block = nodes.literal_block(text, text)
            block["language"] = "diff"
            out.append(block)
        for base in ports:
            subjects = nodes.bullet_list()
            for file in source.series_files(base):
                self.env.note_dependency(str(file))
                item = nodes.list_item()
                item += nodes.paragraph(text=f"{file.name}: {read_patch(file).subject}")
                subjects += item
            out.append(nodes.rubric(text=f"The port to {base}"))
            out.append(subjects)
        return out


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("slice-series", SliceSeries)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
