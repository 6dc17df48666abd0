"""Compare model settings by cross-validation on the hand-tagged corpus (for choosing defaults).

Each setting: 5-fold out-of-fold probabilities (vectorizer and boosters refitted inside every
training fold), thresholds tuned on those OOF scores, micro/macro F1 overall and per facet,
plus the model's size (trees, features) and fit time.  Writes one JSON line per setting.

Usage: python benchmarks/tune_model.py OUT.jsonl NAME=JSON [NAME=JSON ...]
  e.g. python benchmarks/tune_model.py /tmp/t.jsonl base='{}' mf4k='{"tfidf":{"max_features":4000}}'
"""
import json
import sys
import time

sys.path.insert(0, ".")

from tagger.corpus import load_corpus  # noqa: E402
from tagger.metrics import scores_by_facet  # noqa: E402
from tagger.training import NUM_ROUNDS, label_matrix, out_of_fold_proba, tune_thresholds  # noqa: E402
from tagger.taxonomy import load_taxonomy  # noqa: E402
from tagger.text import document_text  # noqa: E402


def main(out, settings):
    tax = load_taxonomy("taxonomy.yaml")
    recs = load_corpus("fixtures/corpus.jsonl")
    texts = [document_text(r) for r in recs]
    Y = label_matrix(recs, tax.label_ids)
    for s in settings:
        name, spec = s.split("=", 1)
        spec = json.loads(spec)
        t = time.time()
        P = out_of_fold_proba(texts, Y, tax, 5, 0, spec.get("lgbm"), spec.get("rounds", NUM_ROUNDS), spec.get("tfidf"))
        th, _ = tune_thresholds(Y, P, tax)
        sc = scores_by_facet(Y, P, tax, th)
        row = {"name": name, "spec": spec, "seconds": round(time.time() - t, 1),
               **{f"{f}_f1_micro": v["f1_micro"] for f, v in sc.items()}, "f1_macro": sc["all"]["f1_macro"]}
        print(json.dumps(row), flush=True)
        with open(out, "a") as fh:
            fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
