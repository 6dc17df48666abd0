"""Benchmark of tagging past one process: Dask workers against ``--jobs``, and Parquet memory.

Run from the repository root with the project's Python, ``.[dask]`` installed::

    python benchmarks/scale.py                  # full run (a few minutes)
    python benchmarks/scale.py --quick          # 4,000 rows, one run each (sanity run)
    python benchmarks/scale.py --only dask      # or --only parquet
    python benchmarks/scale.py --json out.json  # also write every figure to a JSON file
    python benchmarks/scale.py --shared DIR     # where the shared data lives [default: ../shared]

Figures:

1. Dask.  N real arXiv rows (as ``bench.py``'s throughput figure: 20,000; ``id``, ``title``,
   ``abstract``) as one JSON Lines
   file and as 8 partitions of it.  Abstracts per second of ``tagger label FILE -o OUT
   --jobs 1`` and ``--jobs 2``, and of ``tagger label --dask ADDRESS 'parts/*.jsonl' -o
   DIR/`` on a ``LocalCluster`` of 1 and of 2 worker processes (one thread each, loopback),
   whole fresh ``tagger`` processes each time: "cold" is the first run on a new cluster (every
   worker loads the model), "warm" a second run on it; median of the runs.  The outputs of
   every run are checked byte for byte against ``--jobs 1``'s.  The model load time per
   worker (``tagger.dask.load_seconds``: ``tagger.load`` in a fresh worker, the imports it
   makes included).
2. Parquet memory.  Peak RSS of ``tagger label works.parquet -o tagged.parquet`` on N rows
   (1x) and on the same rows ten times over (10x) [10x / 1x <= 1.25: memory stays flat].

Absolute rates drift on a shared machine (the 1-minute load average is printed beside each
figure); the ratios are what to compare.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench  # noqa: E402  (run_once, tagger_command, load_arxiv_rows, write_jsonl, log)

PARTS = 8


def load_rows(shared: Path, n: int) -> list[dict]:
    if (shared / "corpora").is_dir():  # with an id, so that the outputs do not differ by default ids
        return [{"id": r["arxiv_id"], "title": r["title"], "abstract": r["abstract"]}
                for r in bench.load_arxiv_rows(shared, n)]
    bench.log(f"no {shared / 'corpora'}: using fixtures/corpus.jsonl, repeated")
    base = [json.loads(line) for line in open(bench.REPO / "fixtures" / "corpus.jsonl", encoding="utf-8")]
    base = [{"id": r["id"], "title": r.get("title", ""), "abstract": r["abstract"]} for r in base]
    return [dict(base[i % len(base)], id=f"{base[i % len(base)]['id']}#{i}") for i in range(n)]


def load_avg() -> float:
    return os.getloadavg()[0]


def dask_figures(rows, tmp: Path, runs: int) -> dict:
    import distributed

    tagger = bench.tagger_command()[0]
    whole = tmp / "all.jsonl"
    bench.write_jsonl(whole, rows)
    (tmp / "parts").mkdir()
    per = -(-len(rows) // PARTS)
    for k in range(PARTS):
        bench.write_jsonl(tmp / "parts" / f"part-{k:02d}.jsonl", rows[k * per:(k + 1) * per])
    ref = tmp / "ref.jsonl"
    out, n = {}, len(rows)

    def rate(wall):
        return n / wall

    for jobs in (1, 2):
        walls = []
        for _ in range(runs):
            la = load_avg()
            walls.append(bench.run_once([*tagger, "label", str(whole), "-o", str(ref), "--jobs", str(jobs)])["wall"])
        out[f"jobs{jobs}"] = {"abstracts_per_s": rate(statistics.median(walls)), "wall_s": walls, "load_avg": la}
        bench.log(f"label --jobs {jobs}: {out[f'jobs{jobs}']['abstracts_per_s']:,.0f} abstracts/s (load {la:.1f})")
    want = ref.read_bytes()
    for workers in (1, 2):
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                                      dashboard_address=None, silence_logs=40) as cluster, \
                distributed.Client(cluster) as client:
            figs = {}
            for phase in ["cold"] + ["warm"] * runs:
                dst = tmp / "out"
                shutil.rmtree(dst, ignore_errors=True)
                la = load_avg()
                wall = bench.run_once([*tagger, "label", "--dask", cluster.scheduler_address,
                                       str(tmp / "parts" / "part-*.jsonl"), "-o", f"{dst}/"])["wall"]
                got = b"".join((dst / f"part-{k:02d}.jsonl").read_bytes() for k in range(PARTS))
                assert got == want, "the --dask output differs from tagger label's"
                figs.setdefault(phase, []).append((wall, la))
            import tagger.dask as td

            loads = client.run(td.load_seconds)
        res = {phase: {"abstracts_per_s": rate(statistics.median(w for w, _ in v)), "wall_s": [w for w, _ in v],
                       "load_avg": v[-1][1]} for phase, v in figs.items()}
        res["model_load_s_per_worker"] = {w: s for w, s in loads.items()}
        out[f"dask{workers}"] = res
        bench.log(f"--dask, {workers} worker(s): cold {res['cold']['abstracts_per_s']:,.0f}, warm "
                  f"{res['warm']['abstracts_per_s']:,.0f} abstracts/s; model load per worker "
                  + ", ".join(f"{s[0]:.2f} s" for s in loads.values() if s))
    out["ratios"] = {"jobs2/jobs1": out["jobs2"]["abstracts_per_s"] / out["jobs1"]["abstracts_per_s"],
                     "dask2/dask1 (warm)": out["dask2"]["warm"]["abstracts_per_s"] / out["dask1"]["warm"]["abstracts_per_s"],
                     "dask1/jobs1 (warm)": out["dask1"]["warm"]["abstracts_per_s"] / out["jobs1"]["abstracts_per_s"],
                     "dask2/jobs2 (warm)": out["dask2"]["warm"]["abstracts_per_s"] / out["jobs2"]["abstracts_per_s"]}
    return out


def parquet_figures(rows, tmp: Path) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tagger = bench.tagger_command()[0]
    table = pa.Table.from_pylist(rows)
    out = {}
    for times in (1, 10):
        src = tmp / f"works-{times}x.parquet"
        with pq.ParquetWriter(src, table.schema) as w:
            for _ in range(times):
                w.write_table(table, row_group_size=32768)
        la = load_avg()
        r = bench.run_once([*tagger, "label", str(src), "-o", str(tmp / f"tagged-{times}x.parquet")], measure_rss=True)
        n = len(rows) * times
        assert pq.ParquetFile(tmp / f"tagged-{times}x.parquet").metadata.num_rows == n
        out[f"{times}x"] = {"rows": n, "peak_rss_mb": r["rss_mb"], "wall_s": r["wall"],
                            "abstracts_per_s": n / r["wall"], "load_avg": la}
        bench.log(f"parquet {times}x ({n:,} rows): peak RSS {r['rss_mb']:.0f} MB, {n / r['wall']:,.0f} abstracts/s")
    out["ratio_10x_1x"] = out["10x"]["peak_rss_mb"] / out["1x"]["peak_rss_mb"]
    bench.log(f"parquet peak RSS 10x / 1x: {out['ratio_10x_1x']:.2f} (target <= 1.25)")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", choices=["dask", "parquet"])
    ap.add_argument("--json", metavar="FILE")
    ap.add_argument("--shared", default=str(bench.REPO.parent / "shared"))
    args = ap.parse_args()
    n, runs = (4000, 1) if args.quick else (20000, 3)
    rows = load_rows(Path(args.shared), n)
    res = {"rows": n, "cpus": os.cpu_count(), "when": time.strftime("%Y-%m-%dT%H:%M:%S")}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if args.only in (None, "dask"):
            (tmp / "d").mkdir()
            res["dask"] = dask_figures(rows, tmp / "d", runs)
        if args.only in (None, "parquet"):
            (tmp / "p").mkdir()
            res["parquet"] = parquet_figures(rows, tmp / "p")
    print(json.dumps(res, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
