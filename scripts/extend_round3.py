"""Extend fixtures/ with the third round of hand-tagging (no label is made here).

Reads ``fixtures/corpus.jsonl``, ``fixtures/bib-eval.jsonl`` and ``fixtures/agreement/*.jsonl``
(kept as they are) and, from TAGWORK (laid out by ``scripts/draw_round3.py``):

* ``pool/field.jsonl``, ``pool/older3.jsonl``, ``pool/active3.jsonl`` (and ``active3b.jsonl``:
  ranks 971-1,010 of the same margin queue, drawn when duplicates left the corpus 8 short of
  8,000), ``pool/bibout.jsonl``:
  the drawn texts (samples ``field-uniform``, ``older-uniform``, ``active``; bib-eval);
* ``out/<BATCH>.jsonl``: one line ``{"id", "labels"}`` per abstract (bib-eval batches also
  ``"part"``), written by the annotator who read it (``agent:tagger-<BATCH>``).  First passes
  ``F*``, ``O16``-``O20``, ``Q10``-``Q20``, ``B4``-``B5``; a re-tag ``<BATCH>R`` by a fresh
  annotator replaces a first pass whose doubly tagged part agreed below micro-F1 0.90; second,
  blind passes ``AF*``, ``AO3``, ``AQ4``-``AQ5``, ``AB2``; adjudications ``ADJ*`` (a third reader
  settling the ids where the passes differ); ``P*``: the ``part`` of the 300 earlier
  bib-eval entries, as an annotator read each one's field.

Writes ``fixtures/corpus.jsonl`` (old rows first, then the new samples), the agreement files
(second passes appended), and ``fixtures/bib-eval.jsonl`` (file, key, labels, annotator, part:
no text).  Prints each batch's agreement; below 0.90 a batch is to be re-tagged.  Idempotent.

Usage: python scripts/extend_round3.py TAGWORK FIXTURES_DIR
"""
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from draw_round3 import canonical_id  # noqa: E402
from extend_corpus import CC0, arxiv_year, merge_passes, micro_f1, read_jsonl, write_jsonl  # noqa: E402

POOLS = [("field", "field-uniform"), ("older3", "older-uniform"), ("active3", "active"), ("active3b", "active"),
         ("bibout", "bib-eval")]
FIRST = r"(F\d+|O(1[6-9]|20)|Q(1\d|20)|B[45])"


def main(tagwork, fixtures):
    tw, fx = Path(tagwork), Path(fixtures)
    corpus = read_jsonl(fx / "corpus.jsonl")
    bib_old = read_jsonl(fx / "bib-eval.jsonl")
    pool, kind = {}, {}
    for name, k in POOLS:
        for r in read_jsonl(tw / "pool" / f"{name}.jsonl"):
            pool[r["id"]], kind[r["id"]] = r, k
    ids_of_round = set(pool) | {"arxiv:" + canonical_id(i[len("arxiv:"):]) for i in pool if i.startswith("arxiv:")}
    corpus = [r for r in corpus if r["id"] not in ids_of_round]  # idempotent: this round's rows are rebuilt
    have = {r["id"] for r in corpus}
    old_bib_keys = {(r["file"], r["key"]) for r in bib_old}
    bib_old = [r for r in bib_old if f"{r['file']}#{r['key']}" not in pool]
    first, second, adj, batch_of, part = {}, {}, {}, {}, {}
    outs = sorted((tw / "out").glob("*.jsonl"))
    retagged = {f.stem[:-1] for f in outs if f.stem.endswith("R")}
    for f in outs:
        b = f.stem
        if b in retagged:
            print(f"batch {b}: replaced by its re-tag {b}R")
            continue
        rows = read_jsonl(f)
        if b.startswith("P"):
            for r in rows:
                part[r["id"]] = r["part"]
            continue
        if b.startswith("ADJ"):
            target, who = adj, "agent:adjudicator-" + b
        elif re.match(r"A[A-Z]", b):
            target, who = second, "agent:tagger-" + b
        elif re.fullmatch(FIRST + "R?", b):
            target, who = first, "agent:tagger-" + b
        else:
            continue  # a batch of another round
        for r in rows:
            if r["id"] not in pool:
                sys.exit(f"{f}: id {r['id']} is in no pool of this round")
            target[r["id"]] = (sorted(set(r["labels"])), who)
            if r.get("part"):
                part.setdefault(r["id"], r["part"])
            if target is first:
                batch_of[r["id"]] = b
    per_batch = {}
    for i, (l2, _) in second.items():
        if i in first:
            per_batch.setdefault(batch_of[i], []).append((first[i][0], l2))
    low = []
    for b, p in sorted(per_batch.items()):
        f1 = micro_f1(p)
        print(f"batch {b}: {len(p)} doubly tagged, micro-F1 {f1:.3f}" + ("  <- re-tag" if f1 < 0.90 else ""))
        if f1 < 0.90:
            low.append(b)
    keep, texts = [], {" ".join(r["abstract"].split()).lower() for r in corpus}
    for i in pool:
        if i not in first or i in have or (i.startswith("arxiv:") and "arxiv:" + canonical_id(i[6:]) in have):
            continue
        norm = " ".join(pool[i]["abstract"].split()).lower()
        if kind[i] != "bib-eval":
            if norm in texts:
                print(f"{i}: same abstract as a row already in the corpus; left out")
                continue
            texts.add(norm)
        keep.append(i)
    p1 = [{"id": i, "labels": first[i][0], "annotator": first[i][1]} for i in keep]
    p2 = [{"id": i, "labels": second[i][0], "annotator": second[i][1]} for i in keep if i in second]
    settled = [{"id": i, "labels": adj[i][0], "annotator": adj[i][1]} for i in keep if i in adj]
    cid = {i: ("arxiv:" + canonical_id(i[len("arxiv:"):]) if i.startswith("arxiv:") else i) for i in keep}
    merged = merge_passes(p1, p2, settled, tw)
    p1 = [{**r, "id": cid[r["id"]]} for r in p1 if r["id"] in second]
    p2 = [{**r, "id": cid[r["id"]]} for r in p2]
    settled = [{**r, "id": cid[r["id"]]} for r in settled]
    new, bib_new = [], []
    for i in keep:
        labels, who = merged[i]["labels"], merged[i]["annotator"]
        r = pool[i]
        if kind[i] == "bib-eval":
            if (r["file"], r["key"]) not in old_bib_keys:
                bib_new.append({"file": r["file"], "key": r["key"], "labels": labels, "annotator": who,
                                "part": part[i]})
            continue
        row = {"id": "arxiv:" + canonical_id(i[len("arxiv:"):]), "title": r["title"], "abstract": r["abstract"], "labels": labels, "annotator": who,
               "source": r["source"], "sample": kind[i]}
        y = arxiv_year(row["id"])
        if y:
            row["year"] = y
        row["licence"] = CC0
        new.append(row)
    order = {"field-uniform": 0, "older-uniform": 1, "active": 2}
    new.sort(key=lambda r: order[r["sample"]])
    for r in bib_old:
        p = part.get(f"{r['file']}#{r['key']}")
        if p:
            r["part"] = p
    ag = fx / "agreement"
    ours = set(pool) | set(cid.values())
    old_p1, old_p2, old_adj = ([r for r in read_jsonl(ag / f"{n}.jsonl") if r["id"] not in ours]
                               for n in ("pass1", "pass2", "adjudicated"))
    out = corpus + new
    for path, rows in [(fx / "corpus.jsonl", out), (ag / "pass1.jsonl", old_p1 + p1),
                       (ag / "pass2.jsonl", old_p2 + p2), (ag / "adjudicated.jsonl", old_adj + settled),
                       (fx / "bib-eval.jsonl", bib_old + bib_new)]:
        write_jsonl(path, rows)
    counts = {}
    for r in out:
        counts[r["sample"]] = counts.get(r["sample"], 0) + 1
    print(f"corpus {len(out)} {counts}; bib-eval {len(bib_old) + len(bib_new)} "
          f"(parts: {sum(1 for r in bib_old + bib_new if r.get('part') == 'outside-ml')} outside-ml); "
          f"doubly tagged this round {len(p1)}; adjudicated {len(settled)}; batches to re-tag: {low or 'none'}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
