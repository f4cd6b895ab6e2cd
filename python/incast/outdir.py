"""Output directories: checked before anything runs, written all at once.

`incast run` and `incast sweep` never overwrite results silently: a directory
given with `--out` must be empty, new, or (with `--force`) an earlier incast
output, which is then replaced as a whole (no stale file of the old run stays
beside the new ones). A run writes into `OUT/.incast-partial/` and moves its
files up only when all are written; an interrupted or failed run leaves no
directory it created.

One writer at a time: a run and a sweep both hold an flock on `OUT/.incast.lock`
while they write, so a second `incast run` or `incast sweep` into the same
directory is refused instead of mixing (or losing) results. Nothing inside an
output directory may be a symbolic link: incast deletes and rewrites what is
there, and a planted link would send those writes (or `--force`'s deletions)
outside the directory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

#: Present in every directory incast wrote (so `--force` may replace it).
MARKER = ".incast-output"
PARTIAL = ".incast-partial"
#: The lock a run or a sweep holds on its output directory while it writes.
LOCK_FILE = ".incast.lock"
#: Entries that do not make an output directory "not empty".
_BOOKKEEPING = (PARTIAL, LOCK_FILE)


class OutDirError(ValueError):
    """An output directory that cannot be used (the message says why and what to do)."""


def _first_existing(path: Path) -> Path:
    p = path
    while not p.exists():
        if p.parent == p:
            break
        p = p.parent
    return p


def refuse_symlinks(out: Path) -> None:
    """Raise OutDirError if anything inside `out` (at any depth) is a symbolic
    link; `out` itself may be one (the user named it)."""
    for root, dirs, files in os.walk(out):
        for name in sorted(dirs + files):
            path = Path(root) / name
            if path.is_symlink():
                raise OutDirError(
                    f"{path} is a symbolic link inside the output directory {out}: incast "
                    "rewrites and deletes what is in its output directories and does not follow "
                    "links out of them; remove the link, or choose another --out"
                )


def holds_a_run(out: Path) -> bool:
    """Whether `out` holds the results of one `incast run` (its summary.json at
    the top; a sweep keeps each run's under runs/)."""
    return (out / MARKER).exists() and (out / "summary.json").exists()


def clear(out: Path) -> None:
    """Delete everything in `out` but the lock and the staging directory (the
    caller holds the lock and has checked that incast wrote `out`)."""
    for entry in out.iterdir():
        if entry.name in _BOOKKEEPING:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def check(out: Path, force: bool) -> None:
    """Raise OutDirError if `out` cannot receive results; nothing is created."""
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise OutDirError(f"{out} exists and is not a directory: choose another --out")
        refuse_symlinks(out)
        entries = [e for e in out.iterdir() if e.name not in _BOOKKEEPING]
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


class OutputLock:
    """An exclusive, non-blocking flock on `OUT/.incast.lock` (the directory must
    exist). `acquire` raises OutDirError when another run or sweep holds it."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.path = out / LOCK_FILE
        self.fd: int | None = None

    def acquire(self) -> None:
        import fcntl

        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | os.O_CLOEXEC
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise OutDirError(
                    f"{self.path} is a symbolic link: refusing to follow it; remove it, "
                    "or choose another --out"
                ) from None
            raise OutDirError(f"cannot lock {self.out}: {e.strerror or e}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise OutDirError(
                f"another incast run or sweep is writing to {self.out}: wait for it to "
                "finish, or choose another --out"
            ) from None
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the descriptor drops the flock
            self.fd = None


@contextlib.contextmanager
def locked(out: Path) -> Iterator[None]:
    """Hold `out`'s lock (creating `out` if needed) for the duration."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutDirError(f"cannot create {out}: {e.strerror or e}") from None
    lock = OutputLock(out)
    lock.acquire()
    try:
        yield
    finally:
        lock.release()


class Staging:
    """Create `out` (proving it can be written) and lock it before a run;
    `commit` moves the staged files into place, `abandon` undoes everything
    this object created; both release the lock."""

    def __init__(self, out: Path, force: bool) -> None:
        check(out, force)
        self.out = out
        self.created: list[Path] = []
        self.lock = OutputLock(out)
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
        except OSError as e:
            self.abandon()
            raise OutDirError(f"cannot create {out}: {e.strerror or e}") from None
        try:
            self.lock.acquire()
            # Checked again under the lock: another run may have finished here
            # between the first check and the lock.
            check(out, force)
        except OutDirError:
            self.abandon()
            raise
        try:
            self.partial = out / PARTIAL
            if self.partial.exists():
                shutil.rmtree(self.partial)
            self.partial.mkdir()
        except OSError as e:
            self.abandon()
            raise OutDirError(f"cannot create {out}: {e.strerror or e}") from None

    def commit(self) -> list[Path]:
        """Replace whatever `out` held by the staged files; return their paths."""
        clear(self.out)
        written = []
        for entry in sorted(self.partial.iterdir()):
            dest = self.out / entry.name
            os.replace(entry, dest)
            written.append(dest)
        (self.out / MARKER).touch()
        self.partial.rmdir()
        self.lock.release()
        return written

    def abandon(self) -> None:
        partial = getattr(self, "partial", None)
        if partial is not None and partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
        if self.lock.fd is not None and self.created:
            # A directory this run created: its lock file goes with it (removed
            # while still held, so no other writer can be holding it).
            with contextlib.suppress(OSError):
                self.lock.path.unlink()
        self.lock.release()
        for d in reversed(self.created):
            if not d.exists():
                continue
            try:
                d.rmdir()
            except OSError:  # not empty: something else lives there now
                break
