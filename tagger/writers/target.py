"""Where output goes (``-o``): standard output, a device or pipe, or a file replaced atomically.

- ``-`` (or no ``-o``): standard output.  ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N``
  and ``/proc/self/fd/N``: that descriptor itself (so ``>> log`` keeps appending).
- A name that is, or whose symbolic link leads to, a character or block device or a FIFO
  (``/dev/null``, ``/dev/tty``, ``<(...)``): written straight into; never replaced.
- Anything else is a regular file: written to a temporary file beside it (beside the link's
  target, for a symbolic link: the link stays a link) and renamed onto it only when the
  whole output has been written, so an error leaves the old file as it was.  A file whose
  mode has no write bit is not replaced (as root, ``os.access`` would allow it).
- A name ending ``.gz`` is written gzip-compressed (``mtime`` 0, so the same output gives the
  same bytes).
- ``Target(path, binary=True)`` gives a file object taking bytes (Parquet), with the same
  rules; standard output too, unless it is a terminal.

Errors are :class:`OutputError`, one line naming the output (and the option that named it,
``-o`` unless told): a directory, a read-only file, a full disk, a standard output that is
closed.  :meth:`Target.check` finds what can be found before anything is written, for a
command that writes its files after a long run (``tagger evaluate --json``).
"""

from __future__ import annotations

import os
import re
import stat
import sys

from ..errors import TaggerError

_FD_PATH = re.compile(r"^/(?:dev/fd|proc/self/fd)/(\d+)$")
_STD_PATHS = {"/dev/stdout": 1, "/dev/stderr": 2, "/dev/stdin": 0}


class OutputError(TaggerError):
    """Output that cannot be written; the message names it."""


class _Guarded:
    """A text file object whose write errors are :class:`OutputError` (a broken pipe stays
    ``BrokenPipeError``: the reader went away, which is not an error)."""

    def __init__(self, fh, name: str):
        self._fh, self._name = fh, name

    def _fail(self, e: OSError):
        if isinstance(e, BrokenPipeError):
            raise e
        raise OutputError(f"{self._name}: cannot write: {e.strerror or e}") from None

    def write(self, text: str) -> int:
        try:
            return self._fh.write(text)
        except OSError as e:
            self._fail(e)

    def flush(self) -> None:
        try:
            self._fh.flush()
        except OSError as e:
            self._fail(e)

    def isatty(self) -> bool:
        try:
            return self._fh.isatty()
        except (OSError, ValueError):
            return False

    @property
    def buffer(self):
        """The binary file object under this text one, guarded alike (``tagger bib -`` writes
        the file's own bytes)."""
        return _Guarded(self._fh.buffer, self._name)

    def __getattr__(self, name):
        return getattr(self._fh, name)


class Target:
    """The output of one command (module docstring); a context manager giving a text file
    object.  ``path``: ``-o``'s value, None or ``-`` for standard output.

    ``kind`` is ``"stdout"``, ``"fd"`` (a ``/dev/std*`` or ``/dev/fd/N`` name), ``"device"``
    (a device or FIFO) or ``"file"``; ``name`` is what messages call it; ``option`` the
    command-line option that named the output, which the messages name (None: a command
    that writes only to standard output, as ``tagger bib`` and ``tagger taxonomy`` do).  Raises
    :class:`OutputError` for a directory (on creating), a read-only file or a directory that
    does not exist (on entering, or from :meth:`check`), and (on leaving) for a file that
    could not be finished.
    """

    def __init__(self, path: str | None, binary: bool = False, option: str | None = "-o"):
        #: ``binary``: the file object takes bytes (Parquet), not text
        self.binary, self.option = binary, option
        self.path = None if path in (None, "-") else path
        self.name = "standard output" if self.path is None else self.path
        self.fd, self.gzip, self._inner = None, False, None
        self.real = self.path
        if self.path is None:
            self.kind = "stdout"
            return
        m = _FD_PATH.match(self.path)
        if self.path in _STD_PATHS or m:
            self.kind, self.fd = "fd", _STD_PATHS.get(self.path) if not m else int(m.group(1))
            return
        self.real = os.path.realpath(self.path)  # through symbolic links, to what they name
        try:
            st = os.stat(self.real)
        except FileNotFoundError:
            st = None
        except OSError as e:
            raise OutputError(f"{self.path}: cannot write: {e.strerror}") from None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise OutputError(f"{self.path}: is a directory; {option} needs a file name")
        self.kind = "file" if st is None or stat.S_ISREG(st.st_mode) else "device"
        self._mode = None if st is None else st.st_mode & 0o7777
        self.gzip = self.path.lower().endswith(".gz")
        self.tmp, self.fh, self._inner = None, None, None

    @property
    def streams(self) -> bool:
        """True for standard output, a descriptor or a device: written as it comes, with the
        format chosen as for standard output when ``--format`` is not given."""
        return self.kind != "file"

    def is_terminal(self) -> bool:
        """Whether the output is a terminal (for the default format and titles)."""
        try:
            if self.kind == "stdout":
                return sys.stdout is not None and sys.stdout.isatty()
            if self.kind == "fd":
                return os.isatty(self.fd)
            return self.kind == "device" and os.path.exists(self.real) and _isatty_path(self.real)
        except (OSError, ValueError):
            return False

    def __enter__(self):
        self.tmp = None
        if self.kind == "stdout":
            fh = sys.stdout
            if fh is None:
                raise OutputError("standard output is closed" + (f"; name an output file with {self.option} FILE"
                                                                 if self.option else ""))
            if self.binary:
                if self.is_terminal():
                    raise OutputError("binary output (Parquet) is not written to a terminal; redirect it or use -o FILE")
                fh.flush()
                self.fh = _Sink(os.dup(fh.fileno()), self.name, binary=True)
                return self.fh
            if hasattr(fh, "reconfigure"):  # a lone surrogate from a JSON escape: written as \udXXX
                fh.reconfigure(errors="backslashreplace")
            self.fh = _Guarded(fh, self.name)
            return self.fh
        if self.kind == "fd":
            try:
                fd = os.dup(self.fd)
            except OSError as e:
                raise OutputError(f"{self.path}: cannot write: {e.strerror}") from None
        elif self.kind == "device":
            try:
                fd = os.open(self.real, os.O_WRONLY)
            except OSError as e:
                raise OutputError(f"{self.path}: cannot write: {e.strerror}") from None
        else:
            fd = self._temp_file()
        self.fh = _Sink(fd, self.name, self.gzip, self.binary)
        return self.fh

    def check(self) -> None:
        """Raise :class:`OutputError` now for a file that could not be written: a read-only
        file (its mode has no write bit), a directory that does not exist or cannot be
        written in.  Nothing is written; standard output, a descriptor or a device pass."""
        from ..files.atomic import has_write_bit

        if self.kind != "file":
            return
        if self._mode is not None and (not has_write_bit(self._mode) or not os.access(self.real, os.W_OK)):
            raise OutputError(f"{self.path}: is read-only (mode {self._mode:04o}), not replaced; "
                              f"make it writable or choose another {self.option}")
        d = os.path.dirname(self.real)
        if not os.path.isdir(d):
            raise OutputError(f"{self.path}: no such directory: {d}; create it or choose another {self.option}")
        if not os.access(d, os.W_OK | os.X_OK):
            raise OutputError(f"{self.path}: cannot write in {d} (permission denied); choose another {self.option}")

    def _temp_file(self) -> int:
        """A new temporary file beside the target, with the target's mode: its descriptor
        (:func:`tagger.files.atomic.temp_beside`)."""
        from ..files.atomic import temp_beside

        self.check()
        try:
            fd, self.tmp = temp_beside(self.real, self._mode)
        except OSError as e:
            raise OutputError(f"{self.path}: cannot write here: {e.strerror}") from None
        return fd

    def __exit__(self, exc_type, exc, tb):
        if self.kind == "stdout" and not self.binary:
            if exc_type is None:
                self.fh.flush()
            return False
        try:
            self.fh.close(discard=exc_type is not None)
            if self.tmp is not None and exc_type is None:
                try:
                    os.replace(self.tmp, self.real)
                except OSError as e:
                    raise OutputError(f"{self.name}: cannot write: {e.strerror}") from None
        finally:
            if self.tmp is not None and os.path.exists(self.tmp):
                from ..files.atomic import discard

                discard(self.tmp)
        return False


class _Sink:
    """A text file object over a descriptor (with ``binary``, one taking bytes): UTF-8 (a
    lone surrogate written as ``\\udXXX``), gzip-compressed when asked, buffered here
    (64 KiB) and written with ``os.write``, so a failed write leaves nothing behind to fail
    again.  Write errors are :class:`OutputError`
    (a broken pipe stays ``BrokenPipeError``)."""

    BUFFER = 1 << 16

    def __init__(self, fd: int, name: str, gzip: bool = False, binary: bool = False):
        import zlib

        self.fd, self.name, self.binary = fd, name, binary
        self._buf: list[bytes] = []
        self._have = 0
        self._z = zlib.compressobj(6, zlib.DEFLATED, 31) if gzip else None  # wbits 31: the gzip format
        self.closed = False

    def write(self, text) -> int:
        data = bytes(text) if self.binary else text.encode("utf-8", "backslashreplace")
        self._buf.append(data)
        self._have += len(data)
        if self._have >= self.BUFFER:
            self._drain()
        return len(text)

    def _drain(self, final: bool = False) -> None:
        data = b"".join(self._buf)
        self._buf, self._have = [], 0
        if self._z is not None:
            data = self._z.compress(data) + (self._z.flush() if final else b"")
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self.fd, view):]
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OutputError(f"{self.name}: cannot write: {e.strerror or e}") from None

    def flush(self) -> None:
        if self._buf:
            self._drain()

    def isatty(self) -> bool:
        try:
            return os.isatty(self.fd)
        except OSError:
            return False

    def close(self, discard: bool = False) -> None:
        """Write what is left (the gzip trailer too) and close; with ``discard``, just close."""
        if self.closed:
            return
        self.closed = True
        try:
            if not discard:
                self._drain(final=True)
        finally:
            try:
                os.close(self.fd)
            except OSError:
                pass


def _isatty_path(path: str) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError:
        return False
    try:
        return os.isatty(fd)
    finally:
        os.close(fd)
