"""The ``bib-eval`` set: hand tags of entries of real bibliography files, kept without their text.

``fixtures/bib-eval.jsonl`` holds one JSON object per line: ``file`` (a ``.bib`` file relative to
the shared folder's ``bib/``, e.g. ``real/foo.bib``), ``key`` (the entry key), ``labels`` and
``annotator``, and ``part`` (``ml`` or ``outside-ml``: the paper's field as the annotator
read it; figures are reported per part too); the abstracts may not be committed, so they are read from the shared folder when
it is there: ``$TAGGER_SHARED``, else ``shared/`` beside the repository that holds the
bib-eval file (the way ``tests/conftest.py`` finds it).  Title and abstract of each entry are
what the pre-commit hook gives the model (:func:`tagger.bib.read_records`).
These rows are evaluation data only, never training data.
"""

from __future__ import annotations

from ..wording import plural

import json
import os
from pathlib import Path

from ..errors import TaggerError

#: the default bib-eval file, relative to the repository root (like the default corpus)
DEFAULT_BIB_EVAL = "fixtures/bib-eval.jsonl"


def shared_dir(bib_eval_path) -> Path:
    """Where the shared folder is: ``$TAGGER_SHARED``, else ``<repository>/../shared`` for a
    bib-eval file at ``<repository>/fixtures/bib-eval.jsonl``."""
    env = os.environ.get("TAGGER_SHARED")
    if env:
        return Path(env)
    return Path(bib_eval_path).resolve().parent.parent.parent / "shared"


def read_rows(path) -> list[dict]:
    """The rows of a bib-eval file, each with ``file``, ``key``, ``labels`` (list of str),
    ``annotator`` and ``_line``.  Raises :class:`TaggerError` naming file and line when a row
    is not such an object."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                raise TaggerError(f"{path}:{n}: not JSON ({e})") from None
            if not isinstance(r, dict):
                raise TaggerError(f"{path}:{n}: not a JSON object")
            for k in ("file", "annotator"):
                if not isinstance(r.get(k), str) or not r[k]:
                    raise TaggerError(f"{path}:{n}: needs {k!r}, a non-empty string")
            if not isinstance(r.get("key"), str):  # may be "": real files hold entries without a key
                raise TaggerError(f"{path}:{n}: needs 'key', a string")
            if not isinstance(r.get("labels"), list) or not all(isinstance(x, str) for x in r["labels"]):
                raise TaggerError(f"{path}:{n}: needs 'labels', a list of label ids")
            if "abstract" in r or "title" in r:
                raise TaggerError(f"{path}:{n}: holds text ('abstract'/'title'); bib-eval rows keep labels only")
            rows.append({**r, "_line": n})
    return rows


def bib_entries(path) -> dict[str, dict]:
    """``{key: {"key", "title", "abstract"}}`` of the entries of the ``.bib`` file ``path`` that
    have an abstract, read as ``tagger bib`` reads them (:func:`tagger.bib.read_records`:
    LaTeX decoded, strings resolved)."""
    from ..bib import read_records

    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        records, _problems = read_records(fh.read())
    return {r["key"]: {"key": r["key"], "title": r["title"], "abstract": r["abstract"]}
            for r in records if r["abstract"].strip()}


def load_bib_eval(path, taxonomy, *, other_taxonomy_skips: bool = False) -> tuple[list[dict] | None, str]:
    """The bib-eval records (``title``, ``abstract``, ``labels``, ``id`` = ``file#key``) and a
    one-line note.  When the shared folder is absent, returns ``(None, note saying the set is
    skipped)``; so too, with ``other_taxonomy_skips`` (the default set, not one the user named),
    when its labels are not all labels of ``taxonomy`` (a model of another taxonomy).
    Raises :class:`TaggerError` (file, line, what) for an unknown label, a
    missing ``.bib`` file or an entry without an abstract in the shared folder."""
    rows = read_rows(path)
    known = set(taxonomy.label_ids)
    if other_taxonomy_skips:
        unknown = sorted({lb for r in rows for lb in r["labels"] if lb not in known})
        if unknown:
            return None, (f"bib-eval: skipped ({len(rows)} entries of {path}): tagged with another taxonomy "
                          f"({len(unknown)} of its labels are not this one's, e.g. {unknown[0]!r})")
    shared = shared_dir(path)
    if not (shared / "bib").is_dir():
        return None, (f"bib-eval: skipped ({len(rows)} entries of {path}): their texts are read from "
                      f"{shared / 'bib'}, absent here (set TAGGER_SHARED to the shared folder)")
    files: dict[str, dict] = {}
    out = []
    for r in rows:
        where = f"{path}:{r['_line']}"
        bad = [lb for lb in r["labels"] if lb not in known]
        if bad:
            raise TaggerError(f"{where}: unknown label {bad[0]!r}")
        f = shared / "bib" / r["file"]
        if r["file"] not in files:
            if not f.is_file():
                raise TaggerError(f"{where}: {f}: no such .bib file in the shared folder")
            files[r["file"]] = bib_entries(f)
        ent = files[r["file"]].get(r["key"])
        if ent is None:
            raise TaggerError(f"{where}: {f} has no entry {r['key']!r} with an abstract")
        out.append({"id": f"{r['file']}#{r['key']}", "title": ent["title"], "abstract": ent["abstract"],
                    "labels": r["labels"], "annotator": r["annotator"], "sample": "bib-eval",
                    **({"part": r["part"]} if r.get("part") else {})})
    return out, f"bib-eval: {plural(len(out), 'entry', 'entries')} of {plural(len(files), '.bib file')} under {shared / 'bib'}"
