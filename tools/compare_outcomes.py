"""Compare two pytest JUnit XML reports of the same tests, stock and stacked.

    python tools/compare_outcomes.py STOCK.xml STACKED.xml

Prints the count of each outcome on both sides and every test whose outcome
differs among the tests both sides ran (a side stopped by a time limit ran
fewer); exits 1 if one differs or no test ran on both, 0 otherwise. Built-in
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
    both = stock.keys() & stacked.keys()
    differ = sorted(
        (name, stock[name], stacked[name]) for name in both if stock[name] != stacked[name]
    )
    for name, before, after in differ:
        print(f"DIFFERS {name}: stock {before}, stacked {after}")
    # A side stopped by its time limit reports the tests it ran; the rest are
    # compared on the next run, not counted as differences.
    for side, only in (("stock", stock.keys() - both), ("stacked", stacked.keys() - both)):
        if only:
            print(f"ran on {side} only (the other side stopped first): {len(only)} tests")
    print(f"same outcome on both sides: {len(both) - len(differ)} of {len(both)} tests run on both")
    return 1 if differ or not both else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
