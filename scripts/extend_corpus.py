"""Extend fixtures/ with the second round of hand-tagging (no label is made here).

Reads the current ``fixtures/corpus.jsonl`` and ``fixtures/agreement/*.jsonl`` (kept as they
are, each row gaining ``year`` when known and ``licence``), and from TAGWORK (laid out by
``scripts/draw_more.py``):

* ``pool/uniform2.jsonl``, ``pool/older.jsonl``, ``pool/bibeval.jsonl``: the drawn texts;
* ``out/<BATCH>.jsonl``: one line ``{"id", "labels"}`` per abstract, written by the annotator
  who read it (``agent:tagger-<BATCH>``). First passes: ``V*`` (uniform), ``O*``
  (older-uniform), ``B*`` (bib-eval), ``Q*`` (active); a re-tag ``<BATCH>R`` by a fresh
  annotator replaces a first pass whose doubly tagged part agreed below micro-F1 0.90;
  second, blind passes: ``AV*``, ``AO*``, ``AB*``, ``AQ*``; adjudications ``ADJ*`` (a third
  reader settling the ids where the passes differ).

Writes ``fixtures/corpus.jsonl`` (old rows first, then the new samples), the agreement files
(second passes appended) and ``fixtures/bib-eval.jsonl`` (file, key, labels, annotator: no
text).  A batch whose doubly tagged part agrees below micro-F1 0.90 is reported, for re-tagging.

Usage: python scripts/extend_corpus.py TAGWORK FIXTURES_DIR
"""
import json
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tagger.annotate.agreement import agreement  # noqa: E402
from tagger.annotate.merge import MergeConflict, merge_batches  # noqa: E402

CC0 = "CC0-1.0 (arXiv metadata)"
SEED_LICENCE = "seed document given to the project for its fixtures (shared/README.md)"


def read_jsonl(p):
    return [json.loads(line) for line in open(p, encoding="utf-8") if line.strip()]


def write_jsonl(path, rows):
    with open(path, "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def arxiv_year(rid):
    """Submission year from an arXiv id (``arxiv:1609.08934`` -> 2016, ``arxiv:cs/9308101`` -> 1993)."""
    m = re.match(r"arxiv:(?:[a-z-]+(?:\.[A-Z]{2})?/)?(\d{2})(\d{2})", rid)
    if not m:
        return None
    yy = int(m.group(1))
    return 1900 + yy if yy >= 90 else 2000 + yy


def micro_f1(pairs):
    """Micro-F1 between the two passes of ``pairs`` (first-pass labels, second-pass labels), by
    the code of ``tagger corpus agreement``."""
    a = [{"id": str(k), "labels": x} for k, (x, _) in enumerate(pairs)]
    b = [{"id": str(k), "labels": y} for k, (_, y) in enumerate(pairs)]
    return agreement(a, b)["groups"]["all"]["micro_f1"]["all"]


def merge_passes(p1, p2, settled, tw):
    """``{id: row}`` merged by `tagger corpus merge`'s code (A+B, adjudicated C); exits, listing
    them in ``TAGWORK/pending-adjudication.txt``, while passes differ unsettled."""
    with tempfile.TemporaryDirectory() as d:
        files = [Path(d, n) for n in ("pass1.jsonl", "pass2.jsonl", "adjudicated.jsonl")]
        for path, rows in zip(files, (p1, p2, settled)):
            write_jsonl(path, rows)
        try:
            return {r["id"]: r for r in merge_batches([str(files[0]), str(files[1])], str(files[2]))}
        except MergeConflict as e:
            (tw / "pending-adjudication.txt").write_text("\n".join(e.ids) + "\n")
            sys.exit(f"{len(e.ids)} doubly tagged abstracts await adjudication "
                     f"(listed in {tw / 'pending-adjudication.txt'}); nothing written")


def main(tagwork, fixtures):
    tw, fx = Path(tagwork), Path(fixtures)
    corpus = read_jsonl(fx / "corpus.jsonl")
    for r in corpus:
        if r["id"].startswith("arxiv:"):
            r["year"], r["licence"] = arxiv_year(r["id"]), CC0
        else:
            if "iclr-2026" in r["id"]:
                r["year"] = 2026
            r["licence"] = SEED_LICENCE
    pool, kind = {}, {}
    for name, k in [("uniform2", "uniform"), ("older", "older-uniform"), ("bibeval", "bib-eval"),
                    ("active", "active")]:
        p = tw / "pool" / f"{name}.jsonl"
        if p.exists():
            for r in read_jsonl(p):
                pool[r["id"]], kind[r["id"]] = r, k
    # idempotent: rows this script added on an earlier run are rebuilt from TAGWORK, not kept
    corpus = [r for r in corpus if r["id"] not in pool]
    have = {r["id"] for r in corpus}
    first, second, adj, batch_of = {}, {}, {}, {}
    outs = sorted((tw / "out").glob("*.jsonl"))
    retagged = {f.stem[:-1] for f in outs if re.fullmatch(r"[VOBQ]\d+R", f.stem)}
    for f in outs:
        b = f.stem
        if b in retagged:  # its doubly tagged part agreed below 0.90: the re-tag <b>R replaces it whole
            print(f"batch {b}: replaced by its re-tag {b}R")
            continue
        if b.startswith("ADJ"):
            target, who = adj, "agent:adjudicator-" + b
        elif re.match(r"A[A-Z]", b):
            target, who = second, "agent:tagger-" + b
        else:
            target, who = first, "agent:tagger-" + b
        for r in read_jsonl(f):
            if r["id"] not in pool:
                sys.exit(f"{f}: id {r['id']} is in no pool")
            target[r["id"]] = (sorted(set(r["labels"])), who)
            if target is first:
                batch_of[r["id"]] = b
    # agreement per batch (its doubly tagged part) and per sample / facet
    per_batch = {}
    for i, (l2, _) in second.items():
        if i in first:
            per_batch.setdefault(batch_of[i], []).append((first[i][0], l2))
    for b, p in sorted(per_batch.items()):
        f1 = micro_f1(p)
        print(f"batch {b}: {len(p)} doubly tagged, micro-F1 {f1:.3f}" + ("  <- re-tag" if f1 < 0.90 else ""))
    keep, texts = [], {" ".join(r["abstract"].split()).lower() for r in corpus}
    for i in pool:
        if i not in first or i in have:
            continue
        norm = " ".join(pool[i]["abstract"].split()).lower()
        if kind[i] != "bib-eval":
            if norm in texts:  # the same abstract under another arXiv id: the corpus keeps one copy
                print(f"{i}: same abstract as a row already in the corpus; left out")
                continue
            texts.add(norm)
        keep.append(i)
    # the passes are merged by `tagger corpus merge`'s code: A+B, adjudicated C
    p1 = [{"id": i, "labels": first[i][0], "annotator": first[i][1]} for i in keep]
    p2 = [{"id": i, "labels": second[i][0], "annotator": second[i][1]} for i in keep if i in second]
    settled = [{"id": i, "labels": adj[i][0], "annotator": adj[i][1]} for i in keep if i in adj]
    merged = merge_passes(p1, p2, settled, tw)
    p1 = [r for r in p1 if r["id"] in second]
    new, bib_eval = [], []
    for i in keep:
        labels, who = merged[i]["labels"], merged[i]["annotator"]
        r = pool[i]
        if kind[i] == "bib-eval":
            bib_eval.append({"file": r["file"], "key": r["key"], "labels": labels, "annotator": who})
            continue
        row = {"id": i, "title": r["title"], "abstract": r["abstract"], "labels": labels, "annotator": who,
               "source": r["source"], "sample": kind[i]}
        y = arxiv_year(i)
        if y:
            row["year"] = y
        row["licence"] = CC0
        new.append(row)
    order = {"uniform": 0, "older-uniform": 1, "active": 2}
    new.sort(key=lambda r: order[r["sample"]])
    out = corpus + new
    ag = fx / "agreement"
    old_p1, old_p2, old_adj = ([r for r in read_jsonl(ag / f"{n}.jsonl") if r["id"] not in pool]
                               for n in ("pass1", "pass2", "adjudicated"))
    known = {r["id"] for r in old_p1}
    p1 = old_p1 + [r for r in p1 if r["id"] not in known]
    p2 = old_p2 + [r for r in p2 if r["id"] not in known]
    settled = old_adj + [r for r in settled if r["id"] not in known]
    for path, rows in [(fx / "corpus.jsonl", out), (ag / "pass1.jsonl", p1), (ag / "pass2.jsonl", p2),
                       (ag / "adjudicated.jsonl", settled), (fx / "bib-eval.jsonl", bib_eval)]:
        write_jsonl(path, rows)
    counts = {}
    for r in out:
        counts[r["sample"]] = counts.get(r["sample"], 0) + 1
    print(f"corpus {len(out)} {counts}; bib-eval {len(bib_eval)}; doubly tagged {len(p1)}; "
          f"adjudicated {len(settled)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
