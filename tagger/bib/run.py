"""Running files: bytes and encodings, atomic writes, and what a run prints.

Per file, on ``err`` (stderr): one line per problem, ``FILE:LINE: KEY: unreadable: REASON``
(the entry is left untouched) or ``FILE:LINE: KEY: warning: REASON`` (at most 200
characters, more only by as much as the path is longer than 80 characters), then
the summary ``FILE: N entries: a tagged, b updated, c unchanged, d without abstract,
e abstained, f unreadable, g warnings``; for an entry that held tool terms and gains one,
``FILE:LINE: KEY: +x added; to keep it off: tagger = {-x}``.  On ``out`` (stdout): ``Fixing FILE`` for a file
written, with ``--check`` one line per stale entry, ``FILE:LINE: KEY: tags missing: +x +y``
or ``FILE:LINE: KEY: tags out of date: +x -y`` (and ``; to keep it off: tagger = {-x}``
when it gains a label; with ``--remove``, ``tags to remove: -x -y``), and with ``--diff`` the unified diff.
"""

from __future__ import annotations

import codecs
import difflib
import os
import re
import sys
from collections.abc import Iterable
from typing import BinaryIO, TextIO

from ..files.atomic import write_atomic
from ..files.magic import is_gzip, is_pdf
from .edit import BibReport, Predict, update_bib_text
from .merge import Vocabulary
from ..files.limits import MAX_RECORD_SIZE
from .oversized import mask_oversized, unmask
from .read import UNREADABLE

#: the longest problem line printed
MAX_LINE = 200

_BOMS = (  # longest first: the UTF-32-LE BOM starts with the UTF-16-LE one
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class _FileError(Exception):
    """One file cannot be handled; the message is the rest of ``tagger: error: FILE: ...``."""


def _codec(data: bytes, encoding: str | None) -> str:
    """The codec to decode ``data`` with so that encoding the text gives the bytes back: a
    BOM names it (and stays in the text as U+FEFF); else ``encoding``, else UTF-8."""
    name = codecs.lookup(encoding).name if encoding else None
    for bom, codec in _BOMS:
        if data.startswith(bom):
            if name in (None, "utf-8", "utf-8-sig") or (name or "").split("-")[:2] == codec.split("-")[:2]:
                return codec
            break
    if name is None or name == "utf-8-sig":
        return "utf-8"
    return encoding


def decode(data: bytes, encoding: str | None) -> tuple[str, str]:
    """``(text, codec)`` of a file's bytes, such that ``text.encode(codec) == data``.

    Raises:
        _FileError: binary data (a NUL byte in a file without a UTF-16/32 BOM), bytes that
            are not valid UTF-8 (with a hint to pass ``--encoding``), bytes that are not valid
            in ``encoding``, or a decoding that does not round-trip.
    """
    codec = _codec(data, encoding)
    nul = data.find(b"\0")
    if nul >= 0 and not codec.startswith(("utf-16", "utf-32")):
        raise _FileError(f"binary data (NUL byte at offset {nul}), not a BibTeX file; left untouched")
    try:
        text = data.decode(codec)
    except UnicodeDecodeError as exc:
        where = f"byte 0x{data[exc.start]:02x} at offset {exc.start}"
        if encoding is None:
            raise _FileError(f"not valid UTF-8 ({where}); pass --encoding with the file's encoding "
                             f"(e.g. --encoding latin-1)") from None
        raise _FileError(f"cannot decode as {encoding} ({where})") from None
    try:
        same = text.encode(codec) == data
    except UnicodeEncodeError:
        same = False
    if not same:  # e.g. utf-16 written back with another byte order: refuse
        raise _FileError(f"decoding as {codec} and encoding back does not reproduce the file's bytes; "
                         f"file left untouched")
    return text, codec


#: why a file that is a PDF is no input of ``tagger bib``, and what to do instead
PDF_REASON = ("a PDF, not a .bib file: tagger bib edits BibTeX files (export the references from your "
              "reference manager as BibTeX); left untouched")
def gzip_reason(path: str) -> str:
    """Why a gzip-compressed file is no input of ``tagger bib``, and the command that
    decompresses it: the tags are written back into the file, which is not to be made a plain
    one behind the user's back."""
    from shlex import quote

    if path == "-":
        return "gzip-compressed: decompress it first (gunzip -c FILE.gz | tagger bib -)"
    if path.lower().endswith(".gz"):
        how = f"gunzip {quote(path)}, then tagger bib {quote(path[:-3])}"
    else:
        how = f"mv {quote(path)} {quote(path + '.gz')} && gunzip {quote(path + '.gz')}"
    return (f"gzip-compressed: decompress it first ({how}); tagger bib writes the tags back into the file, "
            "so it does not read compressed ones; left untouched")


NO_ENTRIES_REASON = ("holds no BibTeX entries (no @type{key, ...} block), so it is not a .bib file; "
                     "left untouched")


def _not_bibtex(text: str) -> bool:
    """Whether ``text``, in which no entry was found, is no BibTeX at all: it has no
    ``@string``, ``@comment`` or ``@preamble`` block either, and text other than white space
    and ``%`` comment lines.  An empty file, or one of comments only, is a legitimate .bib."""
    from bibtexparser.model import ImplicitComment

    from .locate import parse_blocks

    body = text.lstrip("\ufeff")
    if all(not ln.strip() or ln.lstrip().startswith("%") for ln in body.split("\n")):
        return False
    try:
        blocks = parse_blocks(body)
    except Exception:  # whatever made the file unparsable was reported as a problem already
        return False
    return all(isinstance(b, ImplicitComment) for b, _, _ in blocks)


def _diff(old: str, new: str, path: str) -> str:
    def lines(s: str) -> list[str]:
        parts = s.split("\n")
        res = [p + "\n" for p in parts[:-1]]
        if parts[-1]:
            res.append(parts[-1] + "\n\\ No newline at end of file\n")
        return res

    # git's a/ b/ prefixes for a relative path (patch -p1 applies it); an absolute one as it is, as diff -u writes it
    a, b = (path, path) if os.path.isabs(path) else (f"a/{path}", f"b/{path}")
    return "".join(difflib.unified_diff(lines(old), lines(new), fromfile=a, tofile=b))


_QUOTED_RE = re.compile(r"`([^`]*)`")


def _bounded(path: str, line: int, key: str, what: str, reason: str) -> str:
    """The line ``FILE:LINE: KEY: WHAT REASON`` kept to about :data:`MAX_LINE` characters (more
    by a path over 80 characters) by shortening the key (to 20 characters at the least) and
    what the reason quotes of the file (a ```term``` over 40 characters); the reason and its
    hint (the closest label ids, what to do) are never cut, since they are what to read."""
    limit = max(MAX_LINE, len(path) + MAX_LINE - 80)
    shown = _short(key)
    out = f"{path}:{line}: {shown}: {what}{reason}"
    if len(out) > limit and len(shown) > 20:
        shown = _short(key, max(20, len(shown) - (len(out) - limit)))
        out = f"{path}:{line}: {shown}: {what}{reason}"
    if len(out) > limit:
        reason = _QUOTED_RE.sub(lambda m: m.group(0) if len(m.group(1)) <= 40 else f"`{m.group(1)[:37]}...`", reason)
        out = f"{path}:{line}: {shown}: {what}{reason}"
    return out


def _short(key: str, n: int = 60) -> str:
    return key if len(key) <= n else key[: n - 3] + "..."


def summary(path: str, report: BibReport, n_unreadable: int, n_warnings: int) -> str:
    """The summary line of one file (see the module docstring)."""
    c = report.counts()
    # exactly this form, also for 1 (issue 11: scripts and hooks read it), so "1 entries", "1 warnings"
    return (f"{path}: {len(report.entries)} entries: {c['tagged']} tagged, {c['updated']} updated, "
            f"{c['unchanged']} unchanged, {c['without abstract']} without abstract, {c['abstained']} abstained, "
            f"{n_unreadable} unreadable, {n_warnings} warnings")


def _keep_off(e) -> str:
    """``; to keep it off: tagger = {-x}`` for an entry that held tool terms and gains some
    (a label the model gives now, which the user may have removed by hand), else ``""``."""
    if e.status != "updated" or not e.added:
        return ""
    them = "it" if len(e.added) == 1 else "them"
    return f"; to keep {them} off: tagger = {{{', '.join(f'-{t}' for t in e.added)}}}"


def _added_line(path: str, e) -> str:
    """``FILE:LINE: KEY: +x added; to keep it off: tagger = {-x}`` (see :func:`_keep_off`)."""
    return f"{path}:{e.line}: {_short(e.key)}: {' '.join(f'+{t}' for t in e.added)} added{_keep_off(e)}"


def _stale_line(path: str, e, remove: bool = False) -> str:
    if remove:
        return f"{path}:{e.line}: {_short(e.key)}: tags to remove: " + " ".join(f"-{t}" for t in e.removed)
    terms = " ".join([f"+{t}" for t in e.added] + [f"-{t}" for t in e.removed])
    what = "tags missing" if not e.removed and e.status == "tagged" else "tags out of date"
    return f"{path}:{e.line}: {_short(e.key)}: {what}" + (f": {terms}" if terms else "") + _keep_off(e)


def _process(path: str, report: BibReport, allow_unreadable: bool, err: TextIO) -> tuple[int, int]:
    """Print the problems of a file; returns ``(unreadable, warnings)`` as counted."""
    n_unreadable = n_warnings = 0
    for p in report.problems:
        if p.kind == UNREADABLE and not allow_unreadable:
            n_unreadable += 1
            what = "unreadable: "
        elif p.kind == UNREADABLE:
            n_warnings += 1
            what = "warning: unreadable: "
        else:
            n_warnings += 1
            what = "warning: "
        print(_bounded(path, p.line, p.key, what, p.reason), file=err)
    return n_unreadable, n_warnings


def run(paths: Iterable[str | os.PathLike], *, predict: Predict, facets, check: bool = False,
        strict: bool = False, diff: bool = False, field: str | None = None, encoding: str | None = None,
        allow_unreadable: bool = False, remove: bool = False, out: TextIO | None = None,
        err: TextIO | None = None, max_record_size: int | None = MAX_RECORD_SIZE,
        stdin: BinaryIO | None = None, bib_out: BinaryIO | None = None) -> int:
    """Contract of ``tagger bib FILE...`` and of the pre-commit hooks.

    For each file: read bytes, decode (a UTF-8/16/32 BOM names the encoding; else UTF-8, or
    ``encoding``), run :func:`~tagger.bib.edit.update_bib_text` (``predict`` called once per
    file, ``facets`` as there), print what the module docstring says.  Without ``check`` a
    changed file is written back atomically in its encoding (temporary file +
    ``os.replace``, file mode kept); with ``check`` nothing is written.  ``remove``
    (``--remove``) takes the tool's terms out instead (``predict`` is not called).  An entry longer
    than ``max_record_size`` characters is never parsed nor shown to the model: it is
    unreadable (``value of N MB over the record size limit``) and kept byte for byte.  ``out``/``err``
    default to ``sys.stdout``/``sys.stderr`` as they are at call time.

    The path ``-`` is ``stdin`` (default ``sys.stdin.buffer``), a filter: without ``check`` its
    whole text, tagged (or as it was, when nothing changes), is written to ``bib_out`` (default
    ``sys.stdout.buffer``) in its encoding, after every entry is done (nothing on an error),
    and its being changed does not make the status 1; the problems and summary name it ``-``.
    ``tagger bib`` takes ``-`` only alone and not with ``diff`` unless ``check`` (stdout holds the BibTeX).

    Returns:
        2 if a file could not be read, decoded or written (standard input: read or encoded), or is no BibTeX (a PDF,
        gzip data; text without
        a single ``@`` block: an empty file, or one of ``%`` comments or ``@string`` blocks
        only, is BibTeX) (one ``tagger: error: FILE: ...`` line on ``err``, the file
        untouched), or if any entry is unreadable (unless
        ``allow_unreadable``) or has a correction that was ignored (its warning names why and
        the closest label ids; the rest of the file is written as usual), or with ``strict`` if there is any warning; else 1 if a file
        was changed (with ``check``: would be; not for ``-`` without ``check``); else 0.  Every
        file is processed either way.  A :class:`BrokenPipeError` writing ``bib_out`` (the reader
        went away) is raised.

    Raises:
        ValueError: from ``predict``'s results or ``field`` (see ``update_bib_text``).
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    vocab = facets if isinstance(facets, Vocabulary) else Vocabulary(facets)
    if encoding:
        try:
            codecs.lookup(encoding)
        except LookupError:
            print(f"tagger: error: unknown encoding {encoding!r}", file=err)
            return 2
    rc = 0
    for p in paths:
        path = os.fspath(p)
        from_stdin = path == "-"
        try:
            if from_stdin:
                data = (sys.stdin.buffer if stdin is None else stdin).read()
            else:
                with open(path, "rb") as fh:
                    data = fh.read()
        except OSError as exc:
            what = "standard input" if from_stdin else "file"
            print(f"tagger: error: {path}: cannot read {what}: {exc.strerror or exc}", file=err)
            rc = 2
            continue
        if is_pdf(data.lstrip()):
            print(f"tagger: error: {path}: {PDF_REASON}", file=err)
            rc = 2
            continue
        if is_gzip(data):
            print(f"tagger: error: {path}: {gzip_reason(path)}", file=err)
            rc = 2
            continue
        try:
            text, codec = decode(data, encoding)
        except _FileError as exc:
            print(f"tagger: error: {path}: {exc}", file=err)
            rc = 2
            continue
        masked, originals, oversized = mask_oversized(text, max_record_size)
        del data
        report = update_bib_text(masked, predict, facets=vocab, field=field, verify=not check, remove=remove)
        if originals:  # an entry over --max-record-size: reported unreadable, left as it was
            report.new_text = unmask(report.new_text, originals)
            report.problems = sorted(report.problems + oversized, key=lambda p: p.line)
        del masked
        if not report.entries and not report.problems and _not_bibtex(text):
            print(f"tagger: error: {path}: {NO_ENTRIES_REASON}", file=err)
            rc = 2
            continue
        n_unreadable, n_warnings = _process(path, report, allow_unreadable, err)
        changed = report.new_text != text
        if n_unreadable or report.ignored_corrections or (strict and n_warnings):
            rc = 2
        if check:
            for e in report.stale:
                print(_stale_line(path, e, remove), file=out)
            if changed and diff:
                out.write(_diff(text, report.new_text, path))
        elif from_stdin:
            try:
                payload = report.new_text.encode(codec)
            except UnicodeEncodeError as exc:
                print(f"tagger: error: {path}: the new tags cannot be encoded as {codec} ({exc.reason}); "
                      f"nothing written", file=err)
                rc = 2
                continue
            target = sys.stdout.buffer if bib_out is None else bib_out
            try:
                target.write(payload)
                target.flush()
            except BrokenPipeError:
                raise
            except OSError as exc:
                print(f"tagger: error: {path}: cannot write standard output: {exc.strerror or exc}", file=err)
                rc = 2
                continue
            changed = False  # a filter: nothing was changed in place
            for e in report.entries:
                if _keep_off(e):
                    print(_added_line(path, e), file=err)
        elif changed:
            try:
                write_atomic(path, report.new_text.encode(codec))
            except UnicodeEncodeError as exc:
                print(f"tagger: error: {path}: the new tags cannot be encoded as {codec} ({exc.reason}); "
                      f"file left untouched", file=err)
                rc = 2
                continue
            except OSError as exc:
                print(f"tagger: error: {path}: cannot write file: {exc.strerror or exc}", file=err)
                rc = 2
                continue
            print(f"Fixing {path}", file=out)
            if diff:
                out.write(_diff(text, report.new_text, path))
            for e in report.entries:
                if _keep_off(e):
                    print(_added_line(path, e), file=err)
        if changed:
            rc = max(rc, 1)
        print(summary(path, report, n_unreadable, n_warnings), file=err)
    return rc
