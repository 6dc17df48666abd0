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
from pathlib import Path

CC0 = "CC0-1.0 (arXiv metadata)"
SEED_LICENCE = "seed document given to the project for its fixtures (shared/README.md)"


def read_jsonl(p):
    return [json.loads(line) for line in open(p, encoding="utf-8") if line.strip()]


def arxiv_year(rid):
    """Submission year from an arXiv id (``arxiv:1609.08934`` -> 2016, ``arxiv:cs/9308101`` -> 1993)."""
    m = re.match(r"arxiv:(?:[a-z-]+(?:\.[A-Z]{2})?/)?(\d{2})(\d{2})", rid)
    if not m:
        return None
    yy = int(m.group(1))
    return 1900 + yy if yy >= 90 else 2000 + yy


def micro_f1(pairs):
    tp = fp = fn = 0
    for a, b in pairs:
        a, b = set(a), set(b)
        tp += len(a & b)
        fp += len(b - a)
        fn += len(a - b)
    return 2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0


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
    low = {b: micro_f1(p) for b, p in per_batch.items() if micro_f1(p) < 0.90}
    for b, p in sorted(per_batch.items()):
        print(f"batch {b}: {len(p)} doubly tagged, micro-F1 {micro_f1(p):.3f}" + ("  <- re-tag" if b in low else ""))
    new, bib_eval, p1, p2, settled, pending = [], [], [], [], [], []
    texts = {" ".join(r["abstract"].split()).lower() for r in corpus}
    for i in pool:
        if i not in first or i in have:
            continue
        norm = " ".join(pool[i]["abstract"].split()).lower()
        if kind[i] != "bib-eval":
            if norm in texts:  # the same abstract under another arXiv id: the corpus keeps one copy
                print(f"{i}: same abstract as a row already in the corpus; left out")
                continue
            texts.add(norm)
        labels, who = first[i]
        if i in second:
            l2, who2 = second[i]
            p1.append({"id": i, "labels": labels, "annotator": who})
            p2.append({"id": i, "labels": l2, "annotator": who2})
            if l2 == labels:
                who = f"{who}+{who2}"
            elif i in adj:
                labels, who3 = adj[i]
                who = f"{who}+{who2}, adjudicated {who3}"
                settled.append({"id": i, "labels": labels, "annotator": who3})
            else:
                pending.append(i)
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
        with open(path, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    counts = {}
    for r in out:
        counts[r["sample"]] = counts.get(r["sample"], 0) + 1
    print(f"corpus {len(out)} {counts}; bib-eval {len(bib_eval)}; doubly tagged {len(p1)}; "
          f"adjudicated {len(settled)}; awaiting adjudication {len(pending)}")
    if pending:
        with open(tw / "pending-adjudication.txt", "w") as fh:
            fh.write("\n".join(pending) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
