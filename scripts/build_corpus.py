"""Assemble fixtures/ from the helpers' hand-tagging passes (no label is made here).

Reads TAGWORK/pool/*.jsonl (the abstracts, as drawn by make_tagging_batches.py) and
TAGWORK/out/*.jsonl (one line per abstract: {"id", "labels"}, written by the annotator who
read it).  First passes are the batches named S*, U*, C*; second (agreement) passes A*;
adjudications ADJ* settle the abstracts on which the two passes differ.

Writes fixtures/corpus.jsonl (settled labels, annotator names all hands) and
fixtures/agreement/{pass1,pass2,adjudicated}.jsonl.

Usage: python scripts/build_corpus.py TAGWORK FIXTURES_DIR
"""
import json
import sys
from pathlib import Path


def read_jsonl(p):
    return [json.loads(l) for l in open(p, encoding="utf-8") if l.strip()]


def main(tagwork, fixtures):
    tw, fx = Path(tagwork), Path(fixtures)
    pool, kinds = {}, {}
    for name, kind in [("seeds", "seed"), ("uniform", "uniform"), ("candidates", "rare-label-search")]:
        for r in read_jsonl(tw / "pool" / f"{name}.jsonl"):
            pool[r["id"]], kinds[r["id"]] = r, kind
    first, second, adj = {}, {}, {}
    for f in sorted((tw / "out").glob("*.jsonl")):
        batch = f.stem
        who = f"agent:tagger-{batch}" if not batch.startswith("ADJ") else "agent:adjudicator-" + batch
        rows = read_jsonl(f)
        target = adj if batch.startswith("ADJ") else second if batch.startswith("A") else first
        for r in rows:
            assert r["id"] not in target, (batch, r["id"])
            target[r["id"]] = (sorted(set(r["labels"])), who)
    corpus, p1, p2, settled = [], [], [], []
    order = sorted(first, key=lambda i: (["seed", "uniform", "rare-label-search"].index(kinds[i]), list(pool).index(i)))
    for i in order:
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
                print("not yet adjudicated (first pass kept):", i, file=sys.stderr)
        r = pool[i]
        corpus.append({"id": i, "title": r["title"], "abstract": r["abstract"], "labels": labels,
                       "annotator": who, "source": r["source"], "sample": kinds[i]})
    (fx / "agreement").mkdir(parents=True, exist_ok=True)
    for path, rows in [(fx / "corpus.jsonl", corpus), (fx / "agreement" / "pass1.jsonl", p1),
                       (fx / "agreement" / "pass2.jsonl", p2), (fx / "agreement" / "adjudicated.jsonl", settled)]:
        with open(path, "w", encoding="utf-8") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"corpus {len(corpus)} (seed {sum(r['sample']=='seed' for r in corpus)}, uniform "
          f"{sum(r['sample']=='uniform' for r in corpus)}, rare-label-search "
          f"{sum(r['sample']=='rare-label-search' for r in corpus)}); doubly tagged {len(p1)}; adjudicated {len(settled)}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
