"""Writing tagged records: text, JSON Lines, JSON, TSV, CSV and Annif-style pairs.

A :class:`Writer` takes ``(Record, Prediction)`` pairs one at a time, so output can start
before the input ends.  Formats (``--format``):

- ``text``: one block per record, its id then its tags grouped by facet with scores;
- ``jsonl``: every input field kept, in order, plus ``tags`` (label ids), ``scores``
  ({label: probability} of those tags), and ``reason`` (abstention) / ``explanations``
  when present; existing ``tags``/``scores`` fields are replaced in place;
- ``json``: one array of the ``jsonl`` objects;
- ``tsv``/``csv``: for CSV/TSV input, the input table with every column kept plus ``tags``
  (joined with ``;``) and ``scores`` (JSON); for other inputs, ``tsv`` is one header-less
  row ``id<TAB>tags`` per record and ``csv`` has the columns ``id,tags,scores``;
- ``pairs``: one ``id<TAB>label<TAB>score`` row per tag, as Annif prints suggestions; a
  record without tags gets one row with an empty label and score.
"""

from __future__ import annotations

import csv
import json

OUTPUT_FORMATS = ("text", "jsonl", "json", "tsv", "csv", "pairs")


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
    return out


_OWN_KEYS = ("tags", "scores", "reason", "explanations")


def tagged_json(rec, pred) -> str:
    """One line of JSON: :func:`tagged_fields` of ``rec`` and ``pred``.

    A record read from JSON Lines that has none of the fields tagging writes keeps its line
    as it was, byte for byte (number forms, escapes, spacing), with the new fields appended
    before the closing brace; any other record is serialised anew.  Either way the object
    is the same (``tests/test_output.py``).
    """
    if rec.raw is None or any(k in rec.fields for k in _OWN_KEYS):
        return json.dumps(tagged_fields(rec.fields, pred), ensure_ascii=False)
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
    return body + ("" if body.endswith("{") else ", ") + ", ".join(tail) + "}"


#: JSON text of a str, as ``json.dumps(s, ensure_ascii=False)`` writes it
_string = json.encoder.encode_basestring


#: formats whose text for a record depends on that record alone (see :class:`Renderer`)
PER_RECORD_FORMATS = ("jsonl", "json", "pairs", "tsv", "text")


class Renderer:
    """The output text of one tagged record, for the formats where it depends on that record
    alone: ``jsonl`` (a line), ``json`` (one array element, without separator), ``pairs``,
    header-less ``tsv`` and ``text``.  Plain data, so worker processes can render too.

    ``facets`` is the model's ``[(facet id, kind, labels)]`` (to group ``text`` output);
    ``id_field`` names the id field.  Raises ValueError for another format.
    """

    def __init__(self, fmt: str, facets=(), id_field: str = "id"):
        if fmt not in PER_RECORD_FORMATS:
            raise ValueError(f"format {fmt!r} is not rendered record by record")
        self.fmt, self.facets, self.id_field = fmt, list(facets), id_field

    def __call__(self, rec, pred) -> str:
        fmt = self.fmt
        if fmt == "jsonl":
            return tagged_json(rec, pred) + "\n"
        if fmt == "json":
            return tagged_json(rec, pred)
        rid = _cell(rec.id(self.id_field))
        if fmt == "pairs":
            if pred.tags:
                return "".join(f"{rid}\t{t}\t{pred.scores[t]:.4f}\n" for t in pred.tags)
            return f"{rid}\t\t\n"
        if fmt == "tsv":
            return f"{rid}\t{';'.join(pred.tags)}\n"
        return self._text_block(rid, pred)

    def _text_block(self, rid: str, pred) -> str:
        lines = [rid]
        if pred.reason:
            lines.append(f"  (no tags: {pred.reason})")
        elif not pred.tags:
            lines.append("  (no label passed its threshold)")
        else:
            width = max(len(f[0]) for f in self.facets) + 1 if self.facets else 12
            for f_id, _, _ in self.facets:
                mine = [t for t in pred.tags if t.split(":", 1)[0] == f_id]
                if not mine:
                    continue
                shown = ", ".join(f"{t.split(':', 1)[1]} {pred.scores[t]:.2f}" for t in mine)
                lines.append(f"  {f_id + ':':<{width}} {shown}")
                for t in mine:
                    for gram, contrib in pred.explanations.get(t, []):
                        lines.append(f"  {'':<{width}}   {t.split(':', 1)[1]} <- \"{gram}\" (+{contrib:.2f})")
        return "\n".join(lines) + "\n\n"


class Writer:
    """Streams tagged records to ``fh`` (a text file object) in format ``fmt``.

    ``facets`` is the model's ``[(facet id, kind, labels)]`` (for grouping ``text`` output);
    ``table_format`` is ``"csv"``/``"tsv"`` when the input was a table (then ``csv``/``tsv``
    output keeps every column); ``id_field`` names the id field.  ``count`` is the number of
    records written so far.
    """

    def __init__(self, fh, fmt: str, facets=(), table_format: str | None = None, id_field: str = "id"):
        if fmt not in OUTPUT_FORMATS:
            raise ValueError(f"unknown output format {fmt!r}")
        self.fh, self.fmt, self.facets = fh, fmt, list(facets)
        self.table_format, self.id_field = table_format, id_field
        self.count = 0
        self._csv = None
        self._header = None
        table = fmt == "csv" or (fmt == "tsv" and table_format)
        #: the per-record renderer, or None for table output (csv, and tsv of a table)
        self.renderer = None if table else Renderer(fmt, facets, id_field)

    def write(self, rec, pred) -> None:
        """Write one tagged record."""
        if self.renderer is None:
            self._write_table(rec, pred)
            self.count += 1
        else:
            self.write_rendered(self.renderer(rec, pred), 1)

    def write_rendered(self, text: str, n: int) -> None:
        """Write ``n`` records already rendered by :attr:`renderer` (for ``json``, their
        elements joined with ``",\\n"``)."""
        if not n:
            return
        if self.fmt == "json":
            text = ("[\n" if self.count == 0 else ",\n") + text
        self.fh.write(text)
        self.count += n

    def _write_table(self, rec, pred) -> None:
        if self.table_format:
            row = {k: v for k, v in rec.fields.items()}
        else:
            row = {"id": rec.id(self.id_field)}
        row["tags"] = ";".join(pred.tags)
        row["scores"] = json.dumps(pred.scores, ensure_ascii=False)
        if self._csv is None:
            self._header = list(row)
            self._csv = csv.writer(self.fh, delimiter="\t" if self.fmt == "tsv" else ",", lineterminator="\n")
            self._csv.writerow(self._header)
        self._csv.writerow([_flat(row.get(k, "")) for k in self._header])

    def close(self) -> None:
        """Finish the output (closes the JSON array); does not close ``fh``."""
        if self.fmt == "json":
            self.fh.write("[]\n" if self.count == 0 else "\n]\n")


def _cell(v: str) -> str:
    """``v`` on one line, without tabs: ids in tab-separated and text output."""
    return str(v).replace("\t", " ").replace("\r", " ").replace("\n", " ")


def _flat(v):
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return v
