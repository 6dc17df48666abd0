"""Draw the second round of abstracts to hand-tag (issue: tags that hold on real bibliographies).

Like ``make_tagging_batches.py`` this only *selects* texts to be read; it assigns no label.

Modes (each writes ``OUT/pool/<name>.jsonl`` and batches ``OUT/batches/<PREFIX><n>.jsonl`` of
about 100 rows, shuffled within the sample with a fixed seed):

* ``continue-uniform N``: the uniform 2025 sample continued in its recorded shuffle order
  (``random.Random(20261130)`` over ``arxiv-2025-uniform.jsonl.gz``, seed duplicates skipped,
  exactly as the first 900 were drawn) from rank 901 on; rows already in the corpus are
  skipped, and the recorded ranks 1-900 are left as they are.  Sample ``uniform``.
* ``older N_PER_BAND``: ``arxiv-older.jsonl.gz`` (1993-2018), N_PER_BAND rows from each year
  band (before 2005, 2005-09, 2010-14, 2015-18); within a band, equal shares per
  primary-category group (cs.CL/cmp-lg, cs.LG/stat, cs.CV, cs.RO, cs.IR, cs.HC, cs.SD/eess.AS,
  other), a group with fewer rows than its share giving the rest to the others in turn.
  Sample ``older-uniform``.
* ``bib-eval N``: N entries with an abstract from ``bib/real*/`` (at most a sixth of N from
  any one file, the rest drawn uniformly), for the evaluation set ``fixtures/bib-eval.jsonl``
  (labels only are committed, never the texts).

Usage: python scripts/draw_more.py SHARED_DIR OUT_DIR MODE N
"""
import gzip
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_tagging_batches import SEED, read_seeds, shingles  # noqa: E402

BANDS = [("lt2005", 0, 2004), ("2005-09", 2005, 2009), ("2010-14", 2010, 2014), ("2015-18", 2015, 2018)]
GROUPS = ["cl", "lg", "cv", "ro", "ir", "hc", "sd", "other"]


def group(cat):
    """Primary-category group of an arXiv category (the issue's eight strata)."""
    if cat in ("cs.CL", "cmp-lg"):
        return "cl"
    if cat == "cs.LG" or cat.startswith("stat"):
        return "lg"
    if cat in ("cs.SD", "eess.AS"):
        return "sd"
    return {"cs.CV": "cv", "cs.RO": "ro", "cs.IR": "ir", "cs.HC": "hc"}.get(cat, "other")


def load(shared, name):
    return [json.loads(line) for line in gzip.open(shared / "corpora" / name)]


def corpus_ids(repo):
    return {json.loads(line)["id"] for line in open(repo / "fixtures" / "corpus.jsonl", encoding="utf-8")}


def write(out, name, prefix, rows, size=100, first=1):
    (out / "pool").mkdir(parents=True, exist_ok=True)
    (out / "batches").mkdir(parents=True, exist_ok=True)
    with open(out / "pool" / f"{name}.jsonl", "w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    order = list(rows)
    random.Random(SEED + 7).shuffle(order)
    nb = max(1, round(len(order) / size))
    for b in range(nb):
        part = order[b * len(order) // nb:(b + 1) * len(order) // nb]
        with open(out / "batches" / f"{prefix}{b + first}.jsonl", "w", encoding="utf-8") as fh:
            for r in part:
                fh.write(json.dumps({k: r[k] for k in ("id", "title", "abstract")}, ensure_ascii=False) + "\n")
    print(name, len(rows), "rows in", nb, "batches")


def continue_uniform(shared, repo, n):
    seeds = read_seeds(shared)
    seed_sh = set().union(*(shingles(s["abstract"]) for s in seeds))
    have = corpus_ids(repo)
    uni = load(shared, "arxiv-2025-uniform.jsonl.gz")
    order = list(range(len(uni)))
    random.Random(SEED).shuffle(order)
    rank, seen, rows = 0, set(), []
    for i in order:
        r = uni[i]
        sh = shingles(r["abstract"])
        if len(sh & seed_sh) > 0.5 * len(sh) or r["arxiv_id"] in seen:
            continue
        seen.add(r["arxiv_id"])
        rank += 1
        rid = f"arxiv:{r['arxiv_id']}"
        if rank <= 900 or rid in have:
            continue
        rows.append({"id": rid, "title": r["title"], "abstract": r["abstract"],
                     "source": f"arxiv-2025-uniform (uniform sample, rank {rank})"})
        if len(rows) >= n:
            break
    return rows


def older(shared, repo, per_band):
    have = corpus_ids(repo)
    rows = [r for r in load(shared, "arxiv-older.jsonl.gz") if f"arxiv:{r['arxiv_id']}" not in have]
    rng = random.Random(SEED + 2)
    out = []
    for band, lo, hi in BANDS:
        by = {g: [] for g in GROUPS}
        for r in rows:
            if lo <= r["year"] <= hi:
                by[group(r["primary_category"])].append(r)
        for g in GROUPS:
            rng.shuffle(by[g])
        take = {g: 0 for g in GROUPS}
        left = per_band
        while left:
            open_ = [g for g in GROUPS if take[g] < len(by[g])]
            if not open_:
                break
            for g in open_:
                if left == 0:
                    break
                take[g] += 1
                left -= 1
        for g in GROUPS:
            for r in by[g][:take[g]]:
                out.append({"id": f"arxiv:{r['arxiv_id']}", "title": r["title"], "abstract": r["abstract"],
                            "year": r["year"],
                            "source": f"arxiv-older ({r['source']}; band {band}, group {g})"})
    return out


def bib_eval(shared, n):
    import bibtexparser
    from tagger.text import normalize as latex_to_text  # the texts only guide the annotator; never committed
    files = sorted(p for d in ("real", "real-2") for p in (shared / "bib" / d).glob("*.bib"))
    per_file = {}
    for p in files:
        raw = p.read_bytes()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError:
            try:
                text = raw.decode("utf-16")
            except UnicodeDecodeError:
                continue
        lib = bibtexparser.parse_string(text)
        seen, ents = set(), []
        for e in lib.entries:
            f = {k.lower(): v.value for k, v in e.fields_dict.items()}
            ab = latex_to_text(str(f.get("abstract", ""))).strip()
            if len(ab.split()) < 20 or e.key in seen:
                continue
            seen.add(e.key)
            ents.append({"id": f"{p.parent.name}/{p.name}#{e.key}", "file": f"{p.parent.name}/{p.name}",
                         "key": e.key, "title": latex_to_text(str(f.get("title", ""))).strip(),
                         "abstract": ab, "source": f"bib/{p.parent.name}/{p.name}"})
        per_file[p] = ents
    rng = random.Random(SEED + 3)
    cap = max(1, n // 6)
    chosen, rest = [], []
    for p, ents in per_file.items():
        rng.shuffle(ents)
        chosen += ents[:min(cap, len(ents))] if len(ents) <= cap else []
        rest += ents if len(ents) > cap else []
    rng.shuffle(rest)
    # a large file gives at most `cap`; fill to n from the large files' rows, capped per file
    counts = {}
    for e in rest:
        if len(chosen) >= n:
            break
        if counts.get(e["file"], 0) < cap:
            counts[e["file"]] = counts.get(e["file"], 0) + 1
            chosen.append(e)
    if len(chosen) > n:
        rng.shuffle(chosen)
        chosen = chosen[:n]
    return chosen


def main(shared, out, mode, n):
    shared, out = Path(shared), Path(out)
    repo = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(repo))
    if mode == "continue-uniform":
        write(out, "uniform2", "V", continue_uniform(shared, repo, n))
    elif mode == "older":
        write(out, "older", "O", older(shared, repo, n))
    elif mode == "bib-eval":
        write(out, "bibeval", "B", bib_eval(shared, n))
    else:
        sys.exit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
