"""Print the tables of fixtures/README.md about the hand-tagged corpus (Markdown).

Sizes per sample and era, inter-annotator agreement per sample and facet (micro-F1 of the two
blind passes in ``fixtures/agreement/``, through ``tagger.annotate.agreement``, the code of
``tagger corpus agreement``), and label counts per sample.  Counts only; no label is made.

Usage: python scripts/corpus_report.py [FIXTURES_DIR]
"""
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tagger.annotate.agreement import agreement  # noqa: E402

SAMPLES = ["seed", "uniform", "rare-label-search", "older-uniform", "active", "field-uniform", "bib-eval"]
FACETS = ["modality", "method", "evaluation", "contribution"]


def rows(p):
    return [json.loads(line) for line in open(p, encoding="utf-8") if line.strip()]


def era(y):
    if y is None:
        return "unknown"
    return "before 2010" if y < 2010 else "2010-2018" if y <= 2018 else "2019 on"


def main(fx):
    fx = Path(fx)
    corpus = rows(fx / "corpus.jsonl")
    bib = rows(fx / "bib-eval.jsonl")
    sample = {r["id"]: r["sample"] for r in corpus}
    sample.update({f'{r["file"]}#{r["key"]}': "bib-eval" for r in bib})
    n = Counter(r["sample"] for r in corpus)
    print("| sample | examples | before 2010 | 2010-2018 | 2019 on | year unknown |\n|---|---:|---:|---:|---:|---:|")
    for s in SAMPLES[:-1]:
        e = Counter(era(r.get("year")) for r in corpus if r["sample"] == s)
        print(f"| {s} | {n[s]:,} | {e['before 2010']:,} | {e['2010-2018']:,} | {e['2019 on']:,} | {e['unknown']:,} |")
    e = Counter(era(r.get("year")) for r in corpus)
    print(f"| **all** | **{len(corpus):,}** | {e['before 2010']:,} | {e['2010-2018']:,} | {e['2019 on']:,} | {e['unknown']:,} |")
    print(f"| bib-eval (labels only, never training data) | {len(bib)} | | | | |\n")
    p1, p2 = rows(fx / "agreement" / "pass1.jsonl"), rows(fx / "agreement" / "pass2.jsonl")
    print("| sample | doubly tagged | identical sets | all | modality | method | evaluation | contribution |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for s in SAMPLES + ["all"]:
        a = [r for r in p1 if s == "all" or sample.get(r["id"]) == s]
        ids = {r["id"] for r in a}
        b = [r for r in p2 if r["id"] in ids]
        if not a:
            continue
        g = agreement(a, b)["groups"]["all"]
        f = g["micro_f1"]
        print(f"| {s} | {len(a)} | {g['identical']} | {f['all']:.3f} | " + " | ".join(f"{f.get(x, float('nan')):.3f}" for x in FACETS) + " |")
    adj = rows(fx / "agreement" / "adjudicated.jsonl")
    print(f"\nadjudicated by a third reader: {len(adj)}\n")
    labels = sorted({lab for r in corpus for lab in r["labels"]}, key=lambda x: (FACETS.index(x.split(':')[0]), x))
    cols = ["all", "uniform", "older-uniform", "active", "field-uniform"]
    print("| label | " + " | ".join(cols) + " | bib-eval |\n|---|" + "---:|" * (len(cols) + 1))
    for lab in labels:
        c = [sum(lab in r["labels"] for r in corpus if k == "all" or r["sample"] == k) for k in cols]
        print(f"| {lab} | " + " | ".join(f"{x:,}" for x in c) + f" | {sum(lab in r['labels'] for r in bib)} |")
    print(f"\nlabels per abstract: mean {sum(len(r['labels']) for r in corpus) / len(corpus):.2f}; "
          f"annotators: {len({a for r in corpus for a in r['annotator'].replace(', adjudicated ', '+').split('+')})}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "fixtures")
