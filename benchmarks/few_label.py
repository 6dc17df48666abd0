"""The few-label regime of issue 18 beside the pinned peers: the tagger (its default settings:
the packaged text space at weight 0.5 in the linear base), plain TF-IDF + LR and the LinearSVC,
each trained on the same 300 or 1,000 random corpus rows and scored on the other rows and on
bib-eval's parts, with the tagger's lead over each peer and its 95% paired bootstrap interval.

The rows are those of ``screen_space.py``'s few-label parts (per seed S, ``rng(7 + S)``, the
300-row draw first); the tagger's thresholds come from a 3-fold out-of-fold pass inside the
drawn rows, each label thresholded on its own (as the screen scores them); the peers decide as
in ``tagger evaluate --baseline`` (plain LR at 0.5, the SVM at one global threshold from its
own inner folds).

Usage (from the repository root; TAGGER_SHARED names the shared folder)::

    python benchmarks/few_label.py OUT.json [--seeds 0,1,2]
"""
import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, ".")

from tagger.evaluation.bibeval import load_bib_eval  # noqa: E402
from tagger.evaluation.metrics import paired_bootstrap, prf  # noqa: E402
from tagger.evaluation.peers import PEERS  # noqa: E402
from tagger.model.space import DEFAULT_IN_TREES, DEFAULT_WEIGHT, TextSpace  # noqa: E402
from tagger.model.training import fit, fitted_proba, label_matrix, out_of_fold_proba, tune_thresholds  # noqa: E402
from tagger.taxonomy import load_taxonomy  # noqa: E402
from tagger.text import document_text  # noqa: E402


def run(seeds):
    tax = load_taxonomy("taxonomy.yaml")
    recs = [json.loads(line) for line in open("fixtures/corpus.jsonl", encoding="utf-8")]
    texts = [document_text(r) for r in recs]
    Y = label_matrix(recs, tax.label_ids).astype(np.int64)
    brows, _ = load_bib_eval("fixtures/bib-eval.jsonl", tax)
    btexts = [document_text(r) for r in brows]
    BY = label_matrix(brows, tax.label_ids).astype(np.int64)
    bpart = np.array([r.get("part") for r in brows])
    space = TextSpace.load("models/space")
    space.weight = DEFAULT_WEIGHT
    kw = {"space": space, "space_in_trees": DEFAULT_IN_TREES}
    out = []
    for seed in seeds:
        rng = np.random.default_rng(7 + seed)
        for n in (300, 1000):
            t0 = time.time()
            idx = rng.permutation(len(recs))
            tr, rest = idx[:n], idx[n:]
            tr_texts = [texts[i] for i in tr]
            eval_texts = [texts[i] for i in rest] + btexts
            gold = {"corpus": Y[rest], "bib-ml": BY[bpart == "ml"], "bib-outside-ml": BY[bpart == "outside-ml"]}

            def split(D):
                Dc, Db = D[:len(rest)], D[len(rest):]
                return {"corpus": Dc, "bib-ml": Db[bpart == "ml"], "bib-outside-ml": Db[bpart == "outside-ml"]}

            Ptr = out_of_fold_proba(tr_texts, Y[tr], tax, 3, seed, **kw)
            thd, _ = tune_thresholds(Y[tr], Ptr, tax)
            th = np.array([thd[lb] for lb in tax.label_ids])
            fm = fit(tr_texts, Y[tr], tax, **kw)
            systems = {"tagger": split((fitted_proba(fm, tax, eval_texts) >= th).astype(np.int64))}
            for name, peer in PEERS.items():
                D = peer(tr_texts, Y[tr], eval_texts, seed) if name == "svm" else peer(tr_texts, Y[tr], eval_texts)
                systems[name] = split(np.asarray(D, dtype=np.int64))
            row = {"seed": seed, "rows": n, "seconds": None}
            for part, G in gold.items():
                row[part] = {s: round(prf(G, d[part])["f1_micro"], 4) for s, d in systems.items()}
                row[part]["lead"] = {p: paired_bootstrap(G, systems["tagger"][part], systems[p][part], seed=seed)
                                     for p in PEERS}
            row["seconds"] = round(time.time() - t0)
            print(json.dumps(row), flush=True)
            out.append(row)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seeds", default="0,1,2")
    a = ap.parse_args(argv)
    if not os.environ.get("TAGGER_SHARED") and not os.path.isdir("../shared"):
        sys.exit("few_label: the bib-eval texts are read from the shared folder; set TAGGER_SHARED")
    rows = run([int(s) for s in a.seeds.split(",")])
    with open(a.out, "w", encoding="utf-8") as fh:
        json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
