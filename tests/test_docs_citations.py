"""The repository cites only what its users have.

The talks the reproductions follow, the mechanism notes and the HPCC simulator's files once
lived in a folder beside the repository (`seeds/00x_....txt`, `specs/mechanisms.md`,
`shared/...`, `hpcc-format/`) that users do not get. Talks are cited by title, venue and
year, the notes are docs/mechanisms.md, and the HPCC files are bundled in scenarios/hpcc.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
THIS_FILE = Path(__file__).resolve().relative_to(REPO).as_posix()

# Each pattern is a citation of the private folder, with what to cite instead.
PRIVATE_CITATIONS = [
    (re.compile(rb"\bseeds/\d{3}"), "a talk file: cite the talk by title, venue and year"),
    (
        re.compile(rb"\bspecs/[\w.-]+\.md|\bmechanisms\.md \xc2\xa7"),
        "the private notes: cite docs/mechanisms.md by section name",
    ),
    (
        re.compile(rb"(?<!IB )\b[Ss]pec (\xc2\xa7 ?\d|V\d{1,2}\b)"),
        "a section of the private notes: cite docs/mechanisms.md by section name",
    ),
    (
        re.compile(rb"/work/shared|\bshared/(specs|seeds|workloads|hpcc-format|hooks)\b"),
        "the private folder: use the repository's copy (the HPCC files: scenarios/hpcc)",
    ),
    (
        re.compile(rb"\bhpcc-format\b"),
        "the private HPCC folder: the same files are in scenarios/hpcc",
    ),
]


def private_citations(text: bytes) -> list[tuple[int, str, str]]:
    """(line number, cited text, fix) of every private citation in `text`."""
    found = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        for pattern, fix in PRIVATE_CITATIONS:
            for match in pattern.finditer(line):
                found.append((lineno, match.group(0).decode("utf-8", "replace"), fix))
    return found


def repository_files() -> list[str]:
    """Tracked files plus new ones not ignored (so a file is checked before it is committed)."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout: the file list comes from git ls-files")
    listing = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    return [name for name in listing.decode().split("\0") if name]


@pytest.mark.parametrize(
    "text",
    [
        "talk `seeds/004`",
        "(talk: seeds/000_6a877a662b0f0ff5.txt, IEEE 802.1",
        "our notes: `specs/mechanisms.md` §2.5-2.6",
        "spec §2.7",
        "// Spec V10: 51.2 ns at 10G",
        "(spec V13)",
        "`shared/specs/mechanisms.md` §2.5",
        'SHARED = Path("/work/shared/hpcc-format")',
        "The HPCC simulator's own files (../shared/hpcc-format, bundled",
    ],
)
def test_each_kind_of_private_citation_is_found(text):
    assert private_citations(text.encode()), text


@pytest.mark.parametrize(
    "text",
    [
        "(go-back-N, IB spec §9.7.5.2.3; HPCC simulator `RecoverQueue`",
        "docs/mechanisms.md, V13",
        "crates/incast-core/src/hpcc_format/test_util.rs",
        "crates/incast-core/data/workloads",
        "seeds 1-3, a few minutes",
        "the talk's 70 % FSW-to-worker utilization (OCP Global Summit, March 2019)",
    ],
)
def test_public_references_are_not_flagged(text):
    assert private_citations(text.encode()) == [], text


def test_no_file_cites_the_private_folder():
    problems = []
    for name in repository_files():
        path = REPO / name
        if name == THIS_FILE or not path.is_file() or path.is_symlink():
            continue
        for lineno, cited, fix in private_citations(path.read_bytes()):
            problems.append(f"{name}:{lineno}: cites {cited!r}, which users do not have; {fix}")
    assert not problems, "\n".join(problems)
