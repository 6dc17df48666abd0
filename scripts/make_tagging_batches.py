"""Draw the abstracts that helpers hand-tag, and write them as batches.

This script only *selects* abstracts to be read; it never assigns a label.

* Seeds: every abstract of ``../shared/seeds/*.txt`` (the heading paragraph dropped).
* Uniform sample: ``arxiv-2025-uniform.jsonl.gz`` shuffled with ``random.Random(20261130)``;
  rows are taken in that order (skipping seed duplicates), so a larger sample is always a
  prefix-extension of a smaller one.  No keyword is involved.
* Rare-label candidates: rows of both arXiv corpora (not in the uniform prefix) whose text
  matches a search pattern for a label that is rare among the seeds.  The pattern only
  proposes candidates; each one is then read and tagged by the guide like any other row.

Usage: python scripts/make_tagging_batches.py SHARED_DIR OUT_DIR N_UNIFORM N_PER_PATTERN
"""
import gzip
import json
import random
import re
import sys
from pathlib import Path

SEED = 20261130

# label -> candidate search pattern (case-insensitive), used only to propose rows to read
PATTERNS = {
    "audio": r"\b(speech|audio|music|speaker)\b",
    "tabular": r"\btabular\b",
    "graph": r"\b(graph neural|knowledge graph|link prediction|node classification)\b",
    "time-series": r"\b(time[- ]series|forecasting|EEG|ECG)\b",
    "code": r"\b(code generation|program synthesis|source code|code LLM)",
    "3d": r"\b(point cloud|mesh|3D reconstruction|NeRF|gaussian splatting|RGB-D)\b",
    "molecular": r"\b(protein|molecul\w*|drug|single-cell|gene expression)\b",
    "embodied": r"\b(robot\w*|manipulation policy|reinforcement learning agent|game)\b",
    "video": r"\bvideo\b",
    "cnn": r"\b(convolutional|CNN|ResNet|U-Net)\b",
    "rnn": r"\b(LSTM|GRU|recurrent neural|state[- ]space model|Mamba)\b",
    "gnn": r"\b(graph neural network|GNN|message passing)\b",
    "classical-ml": r"\b(random forest|logistic regression|support vector|gradient boosting|k-means|XGBoost)\b",
    "probabilistic": r"\b(Bayesian|variational inference|Gaussian process|graphical model|structural causal)\b",
    "retrieval": r"\b(retrieval-augmented|dense retriev\w*|RAG|re-?ranking)\b",
    "sparse-dictionary": r"\b(sparse autoencoder|dictionary learning|transcoder)s?\b",
    "probing": r"\b(linear prob\w*|probing classifier|logit lens|probing)\b",
    "causal-intervention": r"\b(activation patching|circuit discovery|steering vector|causal mediation|ablation of (heads|neurons))\b",
    "feature-attribution": r"\b(saliency|SHAP|LIME|integrated gradients|feature attribution|influence function)s?\b",
    "concept-based": r"\b(concept bottleneck|concept activation|prototype|prototypical part)\w*\b",
    "natural-language-explanation": r"\b(natural[- ]language explanation|self-explanation|explain (its|their) own|automated interpretability)\w*\b",
    "self-supervised": r"\b(self-supervised|contrastive learning|masked autoencoder)\b",
    "human-study": r"\b(user study|human evaluation|participants|crowdsourc\w*)\b",
    "proof": r"\b(we prove|theorem|regret bound|convergence rate)\b",
    "synthetic": r"\b(synthetic task|toy model|controlled setting|synthetic data)\b",
    "case-study": r"\b(case study|qualitative analysis)\b",
    "dataset": r"\b(we (introduce|release|present) (a |an )?(new )?(dataset|benchmark))\b",
    "theory": r"\b(theoretical framework|we prove|formalis\w*|formaliz\w*)\b",
    "survey": r"\b(survey|systematic review|position paper|we review)\b",
    "tool": r"\b(open-source (library|toolkit|tool|framework)|python package|toolkit|web interface)\b",
}


def norm(s):
    return re.sub(r"\W+", " ", s.lower()).strip()


def shingles(s, n=8):
    w = norm(s).split()
    return {" ".join(w[i:i + n]) for i in range(max(1, len(w) - n + 1))}


def read_seeds(shared):
    out = []
    for f in sorted((shared / "seeds").glob("*.txt")):
        paras = [p.strip() for p in re.split(r"\n\s*\n", f.read_text()) if p.strip()]
        for n, p in enumerate(paras[1:], 1):  # first paragraph is the heading
            out.append({"id": f"{f.stem}:{n}", "title": "", "abstract": p, "source": f"seeds/{f.name}"})
    return out


def main(shared, out, n_uniform, n_per_pattern):
    shared, out = Path(shared), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    seeds = read_seeds(shared)
    seed_sh = set().union(*(shingles(s["abstract"]) for s in seeds))

    def is_seed(row):
        sh = shingles(row["abstract"])
        return len(sh & seed_sh) > 0.5 * len(sh)

    def load(name):
        return [json.loads(l) for l in gzip.open(shared / "corpora" / name)]

    uni = load("arxiv-2025-uniform.jsonl.gz")
    rare = load("arxiv-rare-categories.jsonl.gz")
    order = list(range(len(uni)))
    random.Random(SEED).shuffle(order)
    taken, uniform = set(), []
    for i in order:
        r = uni[i]
        if is_seed(r) or r["arxiv_id"] in taken:
            continue
        taken.add(r["arxiv_id"])
        uniform.append({"id": f"arxiv:{r['arxiv_id']}", "title": r["title"], "abstract": r["abstract"],
                        "source": "arxiv-2025-uniform (uniform sample, rank %d)" % (len(uniform) + 1)})
        if len(uniform) >= n_uniform:
            break
    # rare-label candidates from the rows not in the uniform prefix
    rng = random.Random(SEED + 1)
    pool = [r for r in rare + [uni[i] for i in order[n_uniform * 2:]]]
    rng.shuffle(pool)
    cands = []
    for label, pat in PATTERNS.items():
        rx = re.compile(pat, re.I)
        k = 0
        for r in pool:
            if k >= n_per_pattern:
                break
            if r["arxiv_id"] in taken or not rx.search(r["title"] + " " + r["abstract"]) or is_seed(r):
                continue
            taken.add(r["arxiv_id"])
            cands.append({"id": f"arxiv:{r['arxiv_id']}", "title": r["title"], "abstract": r["abstract"],
                          "source": "arxiv candidate for rare label (search: %s)" % label})
            k += 1
    rng.shuffle(cands)
    for name, rows in [("seeds", seeds), ("uniform", uniform), ("candidates", cands)]:
        with open(out / f"{name}.jsonl", "w") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        print(name, len(rows))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
