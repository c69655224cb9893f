"""Compare two pytest JUnit XML reports of the same tests, stock and stacked.

    python tools/compare_outcomes.py STOCK.xml STACKED.xml

Prints the count of each outcome on both sides and every test whose outcome
differs; exits 1 if one does (or a side ran no test), 0 otherwise. Built-in
devices unchanged means the same tests pass, fail and skip on both sides.
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path


def outcomes(report: Path) -> dict[str, str]:
    """Each test case's outcome (passed, failed, error, skipped), by id."""
    found = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        found[name] = {"failure": "failed"}.get(kinds[0], kinds[0]) if kinds else "passed"
    return found


def main(stock_xml: str, stacked_xml: str) -> int:
    stock, stacked = outcomes(Path(stock_xml)), outcomes(Path(stacked_xml))
    for side, found in (("stock", stock), ("stacked", stacked)):
        counts = ", ".join(f"{n} {k}" for k, n in sorted(Counter(found.values()).items()))
        print(f"{side}: {len(found)} tests, {counts}")
    differ = sorted(
        (name, stock.get(name, "absent"), stacked.get(name, "absent"))
        for name in stock.keys() | stacked.keys()
        if stock.get(name) != stacked.get(name)
    )
    for name, before, after in differ:
        print(f"DIFFERS {name}: stock {before}, stacked {after}")
    print(f"same outcome on both sides: {len(stock.keys() | stacked.keys()) - len(differ)} tests")
    return 1 if differ or not stock or not stacked else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
