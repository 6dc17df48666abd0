"""Hand-tagged corpora: loading and checking the JSON Lines the model is trained on.

Reading records in general (JSON Lines, JSON, CSV/TSV, text, BibTeX) is :mod:`tagger.readers`;
the names below are kept here for code written against the old ``tagger.corpus``.
"""

from __future__ import annotations

import os

from .errors import TaggerError
from .readers import (EXTENSIONS, FORMATS, FileError, InputError, Record, detect_format,  # noqa: F401
                      read_records, record_text_error, sniff_format, source_stem)
from .readers.jsonl import LineChunk, parse_json_record, read_jsonl, read_jsonl_chunks  # noqa: F401
from .readers.lines import open_lines  # noqa: F401
from .readers.stream import CHUNK_BYTES  # noqa: F401
from .readers.text import is_heading, read_paragraphs  # noqa: F401


# --- hand-tagged corpora ----------------------------------------------------------------

#: the repository's hand-tagged corpus, relative to the repository root
DEFAULT_CORPUS = "fixtures/corpus.jsonl"


def need_corpus(path: str) -> None:
    """A clear error when the default corpus is not here (run from elsewhere than the
    repository root, or an installed tagger without the repository)."""
    if path == DEFAULT_CORPUS and not os.path.exists(path):
        raise TaggerError(f"{path}: no such file (the default, relative to the repository root; "
                          "name a hand-tagged corpus with --corpus FILE)")


def load_corpus(path: str) -> list[dict]:
    """All records of a hand-tagged JSONL corpus, each with ``labels`` (list of str)."""
    out = []
    for rec in read_jsonl(path):
        labels = rec.fields.get("labels")
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            raise InputError(f"{path}:{rec.line}: record {rec.fields.get('id')!r} needs 'labels', a list of label ids")
        if not isinstance(rec.fields.get("abstract"), str):
            raise InputError(f"{path}:{rec.line}: record {rec.fields.get('id')!r} has no 'abstract' text")
        out.append({**rec.fields, "_line": rec.line})
    return out


#: the values of a corpus row's ``sample`` (how it was chosen; fixtures/README.md)
CORPUS_SAMPLES = ("seed", "uniform", "rare-label-search", "older-uniform", "active", "field-uniform")


def provenance_problems(r: dict) -> list[str]:
    """What is wrong with the provenance fields of one corpus row (the project's corpus rules):
    ``year`` an int when present (null: unknown), ``licence`` a non-empty string, ``sample``
    one of :data:`CORPUS_SAMPLES`, ``source`` a non-empty string."""
    out = []
    y = r.get("year")
    if y is not None and (not isinstance(y, int) or isinstance(y, bool)):
        out.append(f"'year' must be an integer, not {y!r}")
    for k, what in (("licence", "the text's licence"), ("source", "where the text came from")):
        v = r.get(k)
        if not isinstance(v, str) or not v.strip():
            out.append(f"no {k!r} ({what})" if v is None else f"{k!r} must be a non-empty string, not {v!r}")
    if r.get("sample") not in CORPUS_SAMPLES:
        out.append(f"'sample' is {r.get('sample')!r}, not one of {', '.join(CORPUS_SAMPLES)}")
    return out


def check_corpus(path: str, taxonomy, provenance: bool | str = False, test_set: bool = False,
                 warnings: list | None = None) -> list[str]:
    """Problems of a hand-tagged corpus against ``taxonomy``, one ``FILE:LINE: what`` each.

    Checks: unknown label ids, more than one label of an exclusive facet, duplicate ids,
    duplicate abstracts (after folding whitespace and case), empty abstracts, missing
    annotator; with ``provenance`` also the project corpus's fields
    (:func:`provenance_problems`: year, licence, sample, source); ``provenance="auto"``: when
    ``path`` is the project's corpus, a ``fixtures/corpus.jsonl`` (a corpus of your own, such as
    ``tagger annotate`` writes, may name its samples as it likes).  An empty list means the
    corpus is fine.  ``test_set`` (``tagger evaluate --test``): a test set needs id, text and
    labels only, so a missing annotator is no problem and a duplicate abstract goes to
    ``warnings`` (a list to append to) instead.
    """
    import re

    known = set(taxonomy.label_ids)
    exclusive = {f.id for f in taxonomy.facets if f.kind == "exclusive"}
    problems, ids, texts = [], {}, {}
    records = load_corpus(path)
    if provenance == "auto":
        import os

        provenance = os.path.abspath(path).replace(os.sep, "/").endswith("/fixtures/corpus.jsonl")
    for r in records:
        line, rid = r["_line"], r.get("id")
        where = f"{path}:{line}: {rid}"
        if rid in ids:
            problems.append(f"{where}: duplicate id (first at line {ids[rid]})")
        ids.setdefault(rid, line)
        body = r.get("abstract", "")
        if not body.strip():
            problems.append(f"{where}: empty abstract")
        else:
            key = re.sub(r"\s+", " ", body).strip().lower()
            if key in texts:
                msg = f"{where}: duplicate abstract (same text as line {texts[key]})"
                if not test_set:
                    problems.append(msg)
                elif warnings is not None:
                    warnings.append(msg)
            texts.setdefault(key, line)
        for lb in r["labels"]:
            if lb not in known:
                problems.append(f"{where}: unknown label {lb!r}")
        for f in exclusive:
            mine = [lb for lb in r["labels"] if lb.startswith(f + ":")]
            if len(mine) > 1:
                problems.append(f"{where}: {len(mine)} labels of exclusive facet {f!r}: {', '.join(mine)}")
        if len(set(r["labels"])) != len(r["labels"]):
            problems.append(f"{where}: a label is listed twice")
        if not r.get("annotator") and not test_set:
            problems.append(f"{where}: no 'annotator' (who read and tagged it)")
        if provenance:
            problems += [f"{where}: {p}" for p in provenance_problems(r)]
    return problems
