"""Draw the third round of abstracts to hand-tag (issue: hand tags from the fields people cite).

Like ``draw_more.py`` this only *selects* texts to be read; it assigns no label.

Modes (each writes ``OUT/pool/<name>.jsonl`` and batches ``OUT/batches/<PREFIX><n>.jsonl`` of
about 100 rows, shuffled within the sample with a fixed seed):

* ``field-uniform N``: ``arxiv-unlabelled.jsonl.gz`` rows whose primary category lies outside
  cs, stat and eess (and their forerunners cmp-lg and bayes-an), N in all: equal shares per
  decade (1990s, 2000s, 2010s), and within a decade equal shares per archive group (math,
  physics, cond-mat, astro-ph, hep/nucl/gr-qc/quant-ph/math-ph, nlin, q-bio, q-fin, econ), a
  group with fewer rows than its share passing the rest on in turn, as the older draw did.
  Sample ``field-uniform``; batches F1...
* ``older-more N``: ``older-uniform`` continued: N rows submitted before 2015 from
  ``arxiv-older.jsonl.gz`` and the ML-side part (primary cs, stat, eess, cmp-lg) of
  ``arxiv-unlabelled.jsonl.gz``, equal shares per year band (before 2005, 2005-09, 2010-14) and
  within a band per primary-category group (``draw_more.GROUPS``). Batches O16...
* ``active-pool``: every row of the four arXiv pools not in the corpus nor drawn above, as one
  JSON Lines file (``OUT/pool/all-unlabelled.jsonl``) for ``tagger annotate --queue``.
* ``active-batches``: the queue that ``tagger annotate --queue 970 OUT/pool/all-unlabelled.jsonl
  --exclude fixtures/corpus.jsonl -o OUT/pool/active-queue.jsonl`` wrote (margin sampling by the
  shipped model), as sample ``active``, batches Q10...
* (ranks 971-1,010 of a ``--queue 1010`` run of the same command, the 40 not in the first
  queue, became ``pool/active3b.jsonl`` and batch Q20, with 4 rows for a second pass AQ5.)
* ``second-pass``: 10% of every first-pass batch for a blind second pass (AF, AO, AQ, AB).
* ``bib-outside N``: N entries with an English abstract of 20+ words from ``bib/real-3/`` and
  ``bib/real-2/`` (at most 100 per file; entries with an empty or duplicate key skipped, and
  entries already in ``fixtures/bib-eval.jsonl``), for ``fixtures/bib-eval.jsonl``.  Batches B4...
* ``bib-part``: the texts of the 300 entries already in ``fixtures/bib-eval.jsonl``, for an
  annotator to decide each one's ``part`` (``ml`` or ``outside-ml``).  Batches P1...

Rows whose abstract (folded white space and case) is already in the corpus are skipped.

Usage: python scripts/draw_round3.py SHARED_DIR OUT_DIR MODE [N]
"""
import gzip
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from draw_more import GROUPS, group, write  # noqa: E402
from make_tagging_batches import SEED  # noqa: E402

ML_ARCHIVES = {"cs", "stat", "eess", "cmp-lg", "bayes-an"}
FIELD_GROUPS = {
    "math": {"math", "alg-geom", "q-alg", "dg-ga", "funct-an"},
    "physics": {"physics", "chem-ph", "atom-ph", "acc-phys", "plasm-ph", "ao-sci"},
    "cond-mat": {"cond-mat", "mtrl-th", "supr-con"},
    "astro-ph": {"astro-ph"},
    "hep-gr-quant": {"hep-th", "hep-ph", "hep-ex", "hep-lat", "nucl-th", "nucl-ex", "gr-qc", "quant-ph",
                     "math-ph"},
    "nlin": {"nlin", "chao-dyn", "solv-int", "patt-sol", "adap-org", "comp-gas"},
    "q-bio": {"q-bio"},
    "q-fin": {"q-fin"},
    "econ": {"econ"},
}
DECADES = [("1990s", 1990, 1999), ("2000s", 2000, 2009), ("2010s", 2010, 2019)]
OLDER_BANDS = [("lt2005", 0, 2004), ("2005-09", 2005, 2009), ("2010-14", 2010, 2014)]


def archive(cat):
    return cat.split(".")[0]


def field_group(cat):
    a = archive(cat)
    for g, members in FIELD_GROUPS.items():
        if a in members:
            return g
    return None


def norm(text):
    return " ".join(text.split()).lower()


def canonical_id(aid):
    """An arXiv id as arXiv writes it.  The harvest holds some new-style ids mangled by a float
    round trip: ``1810.0186199999998`` for 1810.01862, ``705.1297`` for 0705.1297.  Four digits
    of year and month, then 5 digits from 1501 on, else 4."""
    m = re.fullmatch(r"(\d{3,4})\.(\d+)", aid)
    if not m:
        return aid
    yymm = m.group(1).zfill(4)
    digits = 5 if int(yymm) >= 1501 else 4
    if len(m.group(1)) == 4 and len(m.group(2)) == digits:
        return aid
    return f"{yymm}.{round((float(aid) - int(m.group(1))) * 10 ** digits):0{digits}d}"


def rows_of(shared, name):
    for line in gzip.open(shared / "corpora" / name):
        r = json.loads(line)
        r["arxiv_id"] = canonical_id(r["arxiv_id"])
        yield r


def corpus(repo):
    rows = [json.loads(line) for line in open(repo / "fixtures" / "corpus.jsonl", encoding="utf-8")]
    return {r["id"] for r in rows}, {norm(r["abstract"]) for r in rows}


def drawn(out):
    ids = set()
    for p in (out / "pool").glob("*.jsonl"):
        if p.name != "all-unlabelled.jsonl":
            ids |= {json.loads(line)["id"] for line in open(p, encoding="utf-8")}
    return ids


def stratified(strata, groups, per_stratum, by, rng):
    """Equal shares per group within each stratum; a short group passes its share on in turn."""
    out = []
    for s in strata:
        cells = {g: list(by.get((s, g), [])) for g in groups}
        for g in groups:
            rng.shuffle(cells[g])
        take, left = {g: 0 for g in groups}, per_stratum[s]
        while left:
            open_ = [g for g in groups if take[g] < len(cells[g])]
            if not open_:
                break
            for g in open_:
                if left == 0:
                    break
                take[g] += 1
                left -= 1
        for g in groups:
            out += [(s, g, r) for r in cells[g][:take[g]]]
    return out


def shares(n, k):
    return [n // k + (1 if i < n % k else 0) for i in range(k)]


def field_uniform(shared, repo, out, n):
    have, texts = corpus(repo)
    taken = drawn(out)
    by = {}
    for r in rows_of(shared, "arxiv-unlabelled.jsonl.gz"):
        g = field_group(r["primary_category"])
        rid = f"arxiv:{r['arxiv_id']}"
        if g is None or rid in have or rid in taken or norm(r["abstract"]) in texts:
            continue
        dec = next((d for d, lo, hi in DECADES if lo <= r["year"] <= hi), None)
        if dec:
            by.setdefault((dec, g), []).append(r)
    for v in by.values():
        v.sort(key=lambda r: r["arxiv_id"])
    # a decade short of rows passes its share on: 1990s and 2000s lack econ and most q-fin
    per = dict(zip([d for d, _, _ in DECADES], shares(n, len(DECADES))))
    chosen = stratified([d for d, _, _ in DECADES], list(FIELD_GROUPS), per, by, random.Random(SEED + 11))
    return [{"id": f"arxiv:{r['arxiv_id']}", "title": r["title"], "abstract": r["abstract"], "year": r["year"],
             "primary_category": r["primary_category"],
             "source": f"arxiv-unlabelled (field-uniform; decade {d}, group {g})"} for d, g, r in chosen]


def older_more(shared, repo, out, n):
    have, texts = corpus(repo)
    taken = drawn(out)
    by, seen = {}, set()
    pools = [("arxiv-older.jsonl.gz", lambda r: True),
             ("arxiv-unlabelled.jsonl.gz", lambda r: archive(r["primary_category"]) in ML_ARCHIVES)]
    for name, keep in pools:
        for r in rows_of(shared, name):
            rid = f"arxiv:{r['arxiv_id']}"
            if not keep(r) or rid in have or rid in taken or rid in seen or norm(r["abstract"]) in texts:
                continue
            band = next((b for b, lo, hi in OLDER_BANDS if lo <= r["year"] <= hi), None)
            if band:
                seen.add(rid)
                r["_pool"] = name.split(".")[0]
                by.setdefault((band, group(r["primary_category"])), []).append(r)
    for v in by.values():
        v.sort(key=lambda r: r["arxiv_id"])
    bands = [b for b, _, _ in OLDER_BANDS]
    chosen = stratified(bands, GROUPS, dict(zip(bands, shares(n, len(bands)))), by, random.Random(SEED + 12))
    return [{"id": f"arxiv:{r['arxiv_id']}", "title": r["title"], "abstract": r["abstract"], "year": r["year"],
             "source": f"{r['_pool']} (older-uniform continued; band {b}, group {g})"} for b, g, r in chosen]


def active_pool(shared, repo, out):
    have, texts = corpus(repo)
    taken = drawn(out)
    seen = set()
    path = out / "pool" / "all-unlabelled.jsonl"
    n = 0
    with open(path, "w", encoding="utf-8") as fh:
        for name in ("arxiv-2025-uniform.jsonl.gz", "arxiv-older.jsonl.gz", "arxiv-rare-categories.jsonl.gz",
                     "arxiv-unlabelled.jsonl.gz"):
            for r in rows_of(shared, name):
                rid = f"arxiv:{r['arxiv_id']}"
                t = norm(r["abstract"])
                if rid in have or rid in taken or rid in seen or t in texts:
                    continue
                seen.add(rid)
                n += 1
                fh.write(json.dumps({"id": rid, "title": r["title"], "abstract": r["abstract"],
                                     "source": name.split(".")[0]}, ensure_ascii=False) + "\n")
    print("active pool", n, "rows in", path)


def bib_entries(path):
    """(key, title, abstract) of each entry of a real .bib file with a key, by bibtexparser."""
    import bibtexparser
    from tagger.text import normalize
    raw = path.read_bytes()
    for enc in ("utf-8-sig", "utf-16"):
        try:
            text = raw.decode(enc)
            break
        except UnicodeDecodeError:
            continue
    else:
        return []
    lib = bibtexparser.parse_string(text)
    out, seen, dup = [], set(), set()
    for e in lib.entries:
        if e.key in seen:
            dup.add(e.key)
        seen.add(e.key)
    for e in lib.entries:
        if not e.key.strip() or e.key in dup:
            continue
        f = {k.lower(): v.value for k, v in e.fields_dict.items()}
        out.append((e.key, normalize(str(f.get("title", ""))).strip(), normalize(str(f.get("abstract", ""))).strip()))
    return out


def bib_outside(shared, repo, n):
    from tagger.model.abstain import abstain_reason
    known = {(r["file"], r["key"]) for r in map(json.loads, open(repo / "fixtures" / "bib-eval.jsonl"))}
    rng = random.Random(SEED + 13)
    per_file = []
    for d in ("real-3", "real-2"):
        for p in sorted((shared / "bib" / d).glob("*.bib")):
            f = f"{d}/{p.name}"
            ents = [{"id": f"{f}#{k}", "file": f, "key": k, "title": t, "abstract": a, "source": f"bib/{f}"}
                    for k, t, a in bib_entries(p)
                    if len(a.split()) >= 20 and (f, k) not in known and abstain_reason(a, title=t) is None]
            rng.shuffle(ents)
            per_file.append(ents[:100])
    # round-robin over files so that no file dominates, up to n
    chosen = []
    while len(chosen) < n and any(per_file):
        for ents in per_file:
            if ents and len(chosen) < n:
                chosen.append(ents.pop())
    return chosen


def bib_part(shared, repo):
    rows = [json.loads(line) for line in open(repo / "fixtures" / "bib-eval.jsonl", encoding="utf-8")]
    cache, out = {}, []
    for r in rows:
        if r["file"] not in cache:
            cache[r["file"]] = {k: (t, a) for k, t, a in bib_entries(shared / "bib" / r["file"])}
        t, a = cache[r["file"]].get(r["key"], ("", ""))
        out.append({"id": f"{r['file']}#{r['key']}", "file": r["file"], "key": r["key"], "title": t, "abstract": a})
    return out


def active_batches(out):
    """The queue ``tagger annotate --queue`` wrote (``OUT/pool/active-queue.jsonl``) as the sample."""
    rows = [json.loads(line) for line in open(out / "pool" / "active-queue.jsonl", encoding="utf-8")]
    for r in rows:
        r["source"] = f"{r.get('source', 'arxiv')} (active: margin sampling by the shipped model)"
    return rows


def second_pass(out):
    """10% of every first-pass batch (F, O, Q, B), drawn with a fixed seed, for a blind second
    pass by other annotators: batches AF<n>, AO<n>, AQ<n>, AB<n> of at most 100 rows."""
    rng = random.Random(SEED + 14)
    groups = {}
    for p in sorted((out / "batches").glob("*.jsonl")):
        kind = p.stem.rstrip("0123456789")
        if kind not in ("F", "O", "Q", "B"):
            continue
        rows = [json.loads(line) for line in open(p, encoding="utf-8")]
        rng.shuffle(rows)
        groups.setdefault(kind, []).extend(rows[:max(1, round(len(rows) / 10))])
    first = {"F": 1, "O": 3, "Q": 4, "B": 2}
    for kind, rows in groups.items():
        nb = -(-len(rows) // 100)
        for b in range(nb):
            part = rows[b * len(rows) // nb:(b + 1) * len(rows) // nb]
            with open(out / "batches" / f"A{kind}{b + first[kind]}.jsonl", "w", encoding="utf-8") as fh:
                for r in part:
                    fh.write(json.dumps(r, ensure_ascii=False) + "\n")
            print(f"A{kind}{b + first[kind]}", len(part), "rows")


def main(shared, out, mode, n=0):
    shared, out = Path(shared), Path(out)
    repo = Path(__file__).resolve().parent.parent
    sys.path.insert(0, str(repo))
    (out / "pool").mkdir(parents=True, exist_ok=True)
    if mode == "field-uniform":
        write(out, "field", "F", field_uniform(shared, repo, out, n))
    elif mode == "older-more":
        write(out, "older3", "O", older_more(shared, repo, out, n), first=16)
    elif mode == "active-pool":
        active_pool(shared, repo, out)
    elif mode == "active-batches":
        write(out, "active3", "Q", active_batches(out), first=10)
    elif mode == "second-pass":
        second_pass(out)
    elif mode == "bib-outside":
        write(out, "bibout", "B", bib_outside(shared, repo, n), first=4)
    elif mode == "bib-part":
        write(out, "bibpart", "P", bib_part(shared, repo))
    else:
        sys.exit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], *(int(a) for a in sys.argv[4:]))
