"""Draw the abstracts of README.md's walk-through ("Your own taxonomy in an afternoon").

From ../shared/corpora/arxiv-older.jsonl.gz (arXiv metadata, CC0), the rows whose primary
category is cs.RO and whose abstract has 400-1,200 characters, shuffled with
random.Random(20261201); the first 60 go to examples/robotics/abstracts.jsonl (to
hand-tag), the next 20 to examples/robotics/new.jsonl (to label with the trained model).
It chooses texts only: no label is made here.

Usage: python scripts/draw_walkthrough.py SHARED_DIR OUT_DIR
"""
import gzip
import json
import random
import sys
from pathlib import Path


def main(shared, out):
    rows = []
    with gzip.open(Path(shared) / "corpora" / "arxiv-older.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            if r["primary_category"] == "cs.RO" and 400 <= len(r["abstract"]) <= 1200:
                rows.append({"id": f"arxiv:{r['arxiv_id']}", "title": " ".join(r["title"].split()),
                             "abstract": r["abstract"].strip(), "year": int(r["year"]), "licence": "CC0-1.0 (arXiv metadata)"})
    random.Random(20261201).shuffle(rows)
    out = Path(out)
    for name, part in (("abstracts.jsonl", rows[:60]), ("new.jsonl", rows[60:80])):
        with open(out / name, "w", encoding="utf-8") as fh:
            for r in part:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"{len(rows)} candidates; wrote 60 + 20")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
