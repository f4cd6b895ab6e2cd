"""Output directories: checked before anything runs, written all at once.

`incast run` and `incast sweep` never overwrite results silently: a directory
given with `--out` must be empty, new, or (with `--force`) an earlier incast
output, which is then replaced as a whole (no stale file of the old run stays
beside the new ones). A run writes into `OUT/.incast-partial/` and moves its
files up only when all are written; an interrupted or failed run leaves no
directory it created.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

#: Present in every directory incast wrote (so `--force` may replace it).
MARKER = ".incast-output"
PARTIAL = ".incast-partial"


class OutDirError(ValueError):
    """An output directory that cannot be used (the message says why and what to do)."""


def _first_existing(path: Path) -> Path:
    p = path
    while not p.exists():
        if p.parent == p:
            break
        p = p.parent
    return p


def check(out: Path, force: bool) -> None:
    """Raise OutDirError if `out` cannot receive results; nothing is created."""
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise OutDirError(f"{out} exists and is not a directory: choose another --out")
        entries = [e for e in out.iterdir() if e.name != PARTIAL]
        if entries:
            if not force:
                raise OutDirError(
                    f"{out} is not empty: pass --force to replace what is in it, "
                    "or choose another --out"
                )
            if not (out / MARKER).exists():
                raise OutDirError(
                    f"{out} is not empty and was not written by incast (no {MARKER} file): "
                    "refusing to delete its contents even with --force; choose another --out"
                )
        if not os.access(out, os.W_OK | os.X_OK):
            raise OutDirError(f"{out} is not writable")
        return
    ancestor = _first_existing(out.parent if out.parent != out else out)
    if not ancestor.is_dir():
        raise OutDirError(f"cannot create {out}: {ancestor} is a file, not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise OutDirError(f"cannot create {out}: {ancestor} is not writable")


class Staging:
    """Create `out` (proving it can be written) before a run; `commit` moves the
    staged files into place, `abandon` undoes everything this object created."""

    def __init__(self, out: Path, force: bool) -> None:
        check(out, force)
        self.out = out
        self.created: list[Path] = []
        p = out
        missing = []
        while not p.exists():
            missing.append(p)
            if p.parent == p:
                break
            p = p.parent
        try:
            out.mkdir(parents=True, exist_ok=True)
            self.created = list(reversed(missing))
            self.partial = out / PARTIAL
            if self.partial.exists():
                shutil.rmtree(self.partial)
            self.partial.mkdir()
        except OSError as e:
            self.abandon()
            raise OutDirError(f"cannot create {out}: {e.strerror or e}") from None

    def commit(self) -> list[Path]:
        """Replace whatever `out` held by the staged files; return their paths."""
        for entry in self.out.iterdir():
            if entry.name == PARTIAL:
                continue
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        written = []
        for entry in sorted(self.partial.iterdir()):
            dest = self.out / entry.name
            os.replace(entry, dest)
            written.append(dest)
        (self.out / MARKER).touch()
        self.partial.rmdir()
        return written

    def abandon(self) -> None:
        partial = getattr(self, "partial", None)
        if partial is not None and partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
        for d in reversed(self.created):
            if not d.exists():
                continue
            try:
                d.rmdir()
            except OSError:  # not empty: something else lives there now
                break
