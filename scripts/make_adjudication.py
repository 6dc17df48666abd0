"""Write the adjudication batch: the doubly tagged abstracts whose two blind passes differ.

Input: a disagreements file written by ``tagger corpus agreement A B --disagreements FILE``
and the drawn texts in ``TAGWORK/pool/*.jsonl``.  Each output row gives the third reader the
text and the two label sets, as ``labels_x``/``labels_y`` in a random order per row (so the
reader cannot tell which pass is which).  No label is made here.

Usage: python scripts/make_adjudication.py DISAGREEMENTS TAGWORK OUT.jsonl [--skip DONE.jsonl ...]
"""
import json
import random
import sys
from pathlib import Path


def main(dis, tagwork, out, skip=()):
    pool = {}
    for p in sorted(Path(tagwork, "pool").glob("*.jsonl")):
        for line in open(p, encoding="utf-8"):
            r = json.loads(line)
            pool[r["id"]] = r
    done = {json.loads(line)["id"] for s in skip for line in open(s, encoding="utf-8") if line.strip()}
    rng = random.Random(20261201)
    n = 0
    with open(out, "w", encoding="utf-8") as fh:
        for line in open(dis, encoding="utf-8"):
            d = json.loads(line)
            if d["id"] in done or d["id"] not in pool:
                continue
            sets = [d["a"]["labels"], d["b"]["labels"]]
            rng.shuffle(sets)
            r = pool[d["id"]]
            fh.write(json.dumps({"id": d["id"], "title": r["title"], "abstract": r["abstract"],
                                 "labels_x": sets[0], "labels_y": sets[1]}, ensure_ascii=False) + "\n")
            n += 1
    print(f"{out}: {n} abstracts to adjudicate")


if __name__ == "__main__":
    args = sys.argv[1:]
    skips = [args[i + 1] for i, a in enumerate(args) if a == "--skip"]
    pos = [a for i, a in enumerate(args) if a != "--skip" and (i == 0 or args[i - 1] != "--skip")]
    main(*pos[:3], skip=skips)
