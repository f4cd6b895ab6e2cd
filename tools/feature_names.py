"""Which non-test source files of crates/incast-core/src name a feature outside its own folder.

Issue 46's figure: congestion isolation (IEEE 802.1Qcz, mech/ci/) and ECM/QCN/E2CM (cm/) should be
named only by their hooks. Counted: identifiers and string text in code. Not counted: comments
(`//`, `//!`, `///`), the `#[cfg(test)] mod tests` block at the end of a file, files named
tests.rs or under a tests/ folder, and the feature's own folder. "ecmp" (routing) is not ECM.

    python tools/feature_names.py            # both features, a file list each
"""

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "crates" / "incast-core" / "src"

FEATURES = {
    "congestion isolation": (
        "mech/ci/",
        re.compile(r"\bci_\w+|\bCi\w*\b|\bci\b|CongestionIsolation|congestion.isolation", re.I),
    ),
    "ECM/QCN/E2CM": (
        "cm/",
        re.compile(
            r"\b(?:ecm|qcn|e2cm|cm)(?:_\w+)?\b|\b(?:Ecm|Qcn|E2cm|Cm)(?![a-z])\w*"
            r"|\b(?:ECM|QCN|E2CM|CM)(?!P)\w*"
        ),
    ),
}


def code_lines(text: str) -> list[str]:
    """The file's code: without its trailing test module and without comments."""
    cut = re.search(r"^#\[cfg\(test\)\]\s*\n\s*mod \w+ \{", text, re.M)
    if cut:
        text = text[: cut.start()]
    lines = []
    for line in text.splitlines():
        # A `//` outside a string literal starts a comment (good enough for this code base:
        # no string literal here holds "//" except URLs, which no feature pattern matches).
        in_str = False
        out = []
        i = 0
        while i < len(line):
            ch = line[i]
            if ch == '"' and (i == 0 or line[i - 1] != "\\"):
                in_str = not in_str
            if not in_str and line.startswith("//", i):
                break
            out.append(ch)
            i += 1
        lines.append("".join(out))
    return lines


def naming_files(folder: str, pattern: re.Pattern) -> dict[str, list[str]]:
    hits = {}
    for path in sorted(SRC.rglob("*.rs")):
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith(folder) or path.name == "tests.rs" or "/tests/" in f"/{rel}":
            continue
        found = sorted(
            {m.group(0) for line in code_lines(path.read_text()) for m in pattern.finditer(line)}
        )
        if found:
            hits[rel] = found
    return hits


def main() -> int:
    verbose = "-v" in sys.argv
    for name, (folder, pattern) in FEATURES.items():
        hits = naming_files(folder, pattern)
        print(f"{name}: {len(hits)} files outside {folder}")
        for rel, words in hits.items():
            print(f"  {rel}" + (f": {' '.join(words[:12])}" if verbose else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
