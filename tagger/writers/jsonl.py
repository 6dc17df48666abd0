"""JSON Lines and JSON output: every input field kept, in order, plus the tagging's fields.

``jsonl``: one object per line: the input fields, then ``tags`` (label ids), ``scores``
({label: probability} of those tags), and ``reason`` (abstention) / ``explanations`` when
present; existing ``tags``/``scores`` fields are replaced in place.  ``json``: one array of
the same objects.
"""

from __future__ import annotations

import json

FORMATS = ("jsonl", "json")


def tagged_fields(fields: dict, pred) -> dict:
    """The input fields plus ``tags``/``scores`` (and ``reason``/``explanations`` if any)."""
    out = dict(fields)
    out["tags"] = pred.tags
    out["scores"] = pred.scores
    if pred.reason:
        out["reason"] = pred.reason
    else:
        out.pop("reason", None)
    if pred.explanations:
        out["explanations"] = pred.explanations
    if getattr(pred, "note", None):
        out["explain_note"] = pred.note
    return out


_OWN_KEYS = ("tags", "scores", "reason", "explanations", "explain_note")

#: JSON text of a str, as ``json.dumps(s, ensure_ascii=False)`` writes it
_string = json.encoder.encode_basestring


def dumps(obj) -> str:
    """``json.dumps(obj, ensure_ascii=False)``, but JSON: a float NaN or infinity (a Parquet
    double, a pandas cell) is written as ``null``, not as the ``NaN`` that no JSON parser
    but Python's reads."""
    try:
        return json.dumps(obj, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(obj), ensure_ascii=False, allow_nan=False)


def _finite(v):
    import math

    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def tagged_json(rec, pred) -> str:
    """One line of JSON: :func:`tagged_fields` of ``rec`` and ``pred``.

    A record read from JSON Lines that has none of the fields tagging writes keeps its line
    as it was, byte for byte (number forms, escapes, spacing), with the new fields appended
    before the closing brace; any other record is serialised anew.  Either way the object
    is the same (``tests/test_output.py``).
    """
    if rec.raw is None or any(k in rec.fields for k in _OWN_KEYS):
        return dumps(tagged_fields(rec.fields, pred))
    body = rec.raw.strip()[:-1].rstrip()  # a JSON object: without its closing brace
    # what json.dumps writes, without its per-call set-up: strings through its own encoder,
    # floats (the rounded scores) as repr
    tail = [f'"id": {_string(rec.fields["id"])}'] if rec.id_added else []
    tail.append(f'"tags": [{", ".join(map(_string, pred.tags))}]')
    tail.append(f'"scores": {{{", ".join(f"{_string(k)}: {float(v)!r}" for k, v in pred.scores.items())}}}')
    if pred.reason:
        tail.append(f'"reason": {_string(pred.reason)}')
    if pred.explanations:
        tail.append(f'"explanations": {json.dumps(pred.explanations, ensure_ascii=False)}')
    if getattr(pred, "note", None):
        tail.append(f'"explain_note": {_string(pred.note)}')
    return body + ("" if body.endswith("{") else ", ") + ", ".join(tail) + "}"


def render(rec, pred, renderer) -> str:
    """A ``jsonl`` line, or a ``json`` array element (without separator)."""
    return tagged_json(rec, pred) + ("\n" if renderer.fmt == "jsonl" else "")
