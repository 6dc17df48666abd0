"""Learning curve: cross-validated figures on 25/50/75/100% of the hand-tagged corpus.

Each fraction is a seeded random subset (the same seed for every fraction, so smaller subsets
are prefixes of larger ones), evaluated exactly as ``tagger evaluate`` does (5 folds, nested
threshold tuning).  Prints one JSON line per fraction; the table in fixtures/README.md comes
from it.  Usage: python benchmarks/learning_curve.py [FRACTION ...]
"""
import json
import random
import sys

sys.path.insert(0, ".")

from tagger.corpus import load_corpus  # noqa: E402
from tagger.evaluation.crossval import cross_validate  # noqa: E402
from tagger.taxonomy import load_taxonomy  # noqa: E402


def main(fractions):
    tax = load_taxonomy("taxonomy.yaml")
    recs = load_corpus("fixtures/corpus.jsonl")
    order = list(range(len(recs)))
    random.Random(7).shuffle(order)
    for frac in fractions:
        sub = [recs[i] for i in sorted(order[: int(round(frac * len(recs)))])]
        res = cross_validate(sub, tax, k=5)
        t = res["tagger"]["all"]
        print(json.dumps({"fraction": frac, "documents": len(sub), "f1_micro": t["all"]["f1_micro"],
                          "f1_macro": t["all"]["f1_macro"],
                          **{f"{f.id}_f1_micro": t[f.id]["f1_micro"] for f in tax.facets}}), flush=True)


if __name__ == "__main__":
    main([float(x) for x in sys.argv[1:]] or [0.25, 0.5, 0.75, 1.0])
