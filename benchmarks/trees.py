"""What fewer trees win back: the numpy forest's time on real abstracts with the first R
boosting rounds of every booster of a trained model (prediction time is linear in the trees).

Usage (repository root; TAGGER_SHARED or ../shared for the arXiv rows)::

    python benchmarks/trees.py [--model models] [--rows 5000] [--rounds 60,45,30,15]

For each R: the forest built from ``Booster.dump_model(num_iteration=R)`` of the model's
``boosters/`` files, and the median over 3 passes of the seconds it takes to score the rows
in batches of 256 (features and text-space components computed once, outside the timing);
also the whole per-abstract time of ``Model.raw_scores`` with the full forest, to show the
trees' share.  Prints one JSON line per R.
"""
import argparse
import gzip
import itertools
import json
import os
import statistics
import sys
import time

sys.path.insert(0, ".")


def main(argv=None):
    import lightgbm as lgb

    from tagger.model import Model
    from tagger.model.forest import flatten_boosters
    from tagger.text import document_text

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="models")
    ap.add_argument("--rows", type=int, default=5000)
    ap.add_argument("--rounds", default="60,45,30,15")
    a = ap.parse_args(argv)
    shared = os.environ.get("TAGGER_SHARED", "../shared")
    src = os.path.join(shared, "corpora", "arxiv-2025-uniform.jsonl.gz")
    rows = [json.loads(line) for line in itertools.islice(gzip.open(src, "rt", encoding="utf-8"), a.rows)]
    texts = [document_text(r) for r in rows]
    m = Model.load(a.model)
    batches = [m.transform(texts[i:i + 256]) for i in range(0, len(texts), 256)]
    t = time.perf_counter()
    for i in range(0, len(texts), 256):
        m.raw_scores(texts[i:i + 256])
    whole = time.perf_counter() - t
    files = m.manifest["booster_files"]
    outputs = {**{k: [v] for k, v in m.manifest["binary_outputs"].items()}, **m.manifest["exclusive_outputs"]}
    boosters = {k: lgb.Booster(model_str=gzip.open(os.path.join(a.model, "boosters", f), "rt").read())
                for k, f in files.items()}
    for R in (int(x) for x in a.rounds.split(",")):
        forest = flatten_boosters([(b.dump_model(num_iteration=R), outputs[k]) for k, b in boosters.items()],
                                  m.forest.n_outputs, m.forest.bias, m.forest.n_sparse)
        runs = []
        for _ in range(3):
            t = time.perf_counter()
            for b in batches:
                forest.raw_scores(b.n_rows, b.row, b.col, b.value, b.components)
            runs.append(time.perf_counter() - t)
        s = statistics.median(runs)
        print(json.dumps({"rounds": R, "trees": forest.n_trees, "forest_us_per_abstract": round(1e6 * s / len(texts), 1),
                          "raw_scores_us_per_abstract_full_forest": round(1e6 * whole / len(texts), 1),
                          "rows": len(texts)}))


if __name__ == "__main__":
    main()
