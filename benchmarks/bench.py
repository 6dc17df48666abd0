"""Benchmark of the ``tagger`` command line: start-up, throughput, memory, size, .bib files.

Run from the repository root with the project's Python::

    python benchmarks/bench.py                  # full run (several minutes)
    python benchmarks/bench.py --quick          # 2,000 rows, fewer repetitions (sanity run)
    python benchmarks/bench.py --json out.json  # also write every figure to a JSON file
    python benchmarks/bench.py --shared DIR     # where the shared data lives [default: ../shared]

Everything is measured in one run, each figure beside a floor measured in the same run on the
same machine, because absolute times drift on shared machines while ratios hold.  Wall times
are those of whole fresh processes (``subprocess`` start to exit), nothing subtracted.

Figures (targets in brackets):

1. Start-up.  Median wall time over repeated fresh processes (15 runs after 2 warm-ups; the
   three commands are run in turn so that drift hits them alike) of ``tagger --help`` and of
   ``tagger label one.txt`` (one abstract), beside the floor ``python -c "import numpy"``.
   Ratios: --help / floor [<= 1.5], label one / floor [<= 3].  ``tagger`` is the venv's
   console script when installed, else ``python -m tagger`` run from the repository root.
2. Throughput.  Abstracts per second, JSONL in and JSONL out (``-f jsonl -o FILE``), on
   20,000 real arXiv rows (``arxiv_id``, ``title``, ``abstract``; the rows of
   ``corpora/arxiv-2025-uniform.jsonl.gz`` first, then ``arxiv-rare-categories`` to make up
   the count), with ``--jobs 1`` and ``--jobs 2``, run in turn; median of 3 runs, the
   fastest beside it (other work on the machine slows these most: the 1-minute load average
   before each run is kept in the JSON).  The floor is the rate at which the same file is
   merely read, JSON-decoded, lower-cased and tokenised with
   ``re.findall(r"[a-z0-9]+", ...)`` in this Python process.  Ratios: jobs1 / floor
   [>= 0.12, since the text space], jobs2 / jobs1 [>= 1.6].  The --jobs 2 output must be byte-identical to the
   --jobs 1 output.
3. Peak RSS (maximum resident set size of the ``tagger label --jobs 1`` process, from
   ``/usr/bin/time -v``, else from ``os.wait4``'s rusage of that one child) on the 20,000
   rows and on 100,000 records (the 20,000 rows five times in one file) [both < 300 MB and
   about the same: memory stays flat while streaming; "flat" here is 100k / 20k <= 1.25].
4. Installed size.  A wheel built from a copy of the working tree (``pip wheel --no-deps``),
   installed with ``pip install --no-deps --target`` into a temporary directory; the size of
   the installed ``tagger`` directory, model, text space and byte-code included [< 35 MB].
5. .bib files.  Every ``bib/real/*.bib`` copied to a temporary directory (the shared files are
   never touched): wall time of one ``tagger bib --check`` over all copies, versus one
   ``tagger label`` of the same entries' title + abstract from a JSONL file (extracted with
   bibtexparser 2.x, outer braces or quotes stripped); median of 3 runs.  Ratio bib / label
   [<= 2].  Skipped, with a message, when this ``tagger`` has no ``bib`` command.
6. .bib recovery.  The file that ``tests/bib_cases_2/11-perf-many-unclosed-braces.py`` writes
   (3,000 entries of ~1 kB) with 40 entries whose brace is never closed, versus the same file
   without them: wall time of ``tagger bib --check`` on each, median of 3 runs, and the size of
   the broken file's stderr (one bounded line per broken entry).  Ratio broken / clean [<= 2].

``--bib-only`` runs figures 5 and 6 alone (a minute), for work on ``tagger bib``.

The measured processes run with byte-code caching on (``PYTHONDONTWRITEBYTECODE`` removed,
``PYTHONPYCACHEPREFIX`` in the temporary directory, so the checkout gets no ``__pycache__``):
after the warm-ups every module loads from compiled byte-code, as from an installed package.

``--quick``: 2,000 rows (10,000 for the memory run), 5 start-up runs after 1 warm-up, one run
of everything else.  Without the shared directory the script says so and exits 0.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TIME_BIN = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None
TOKEN = re.compile(r"[a-z0-9]+")
#: environment of the measured processes; main() turns byte-code caching on (see docstring)
CHILD_ENV = dict(os.environ)

TARGETS = {
    "help_vs_floor": 1.5,  # at most
    "label_one_vs_floor": 3.0,  # at most
    "jobs1_vs_floor": 0.12,  # at least (issue 18: 0.15 before the text space)
    "jobs2_vs_jobs1": 1.6,  # at least
    "peak_rss_mb": 300.0,  # below
    "rss_growth": 1.25,  # at most: peak RSS on 100k / on 20k
    "installed_mb": 35.0,  # below (issue 18: the text space is 21 MB)
    "bib_vs_label": 2.0,  # at most
    "bib_broken_vs_clean": 2.0,  # at most
}


def log(msg: str) -> None:
    print(f"# {msg}", file=sys.stderr, flush=True)


# --- running processes ------------------------------------------------------------------

def tagger_command() -> tuple[list[str], str]:
    """The venv's console script if it is installed, else ``python -m tagger``."""
    script = Path(sys.executable).parent / "tagger"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)], f"console script {script}"
    return [sys.executable, "-m", "tagger"], f"{sys.executable} -m tagger (no console script in the venv)"


def run_once(cmd: list[str], ok=(0,), measure_rss: bool = False) -> dict:
    """Run ``cmd`` once from the repository root, stdout discarded.

    Returns {"wall": seconds, "rss_mb": peak RSS or None, "rc": exit status, "stderr": text};
    raises RuntimeError when the exit status is not in ``ok``.
    """
    argv = [TIME_BIN, "-v", *cmd] if measure_rss and TIME_BIN else list(cmd)
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=REPO, env=CHILD_ENV, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = rc = os.waitstatus_to_exitcode(status)
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    rss_mb = None
    if measure_rss:
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr) if TIME_BIN else None
        rss_kb = int(m.group(1)) if m else usage.ru_maxrss  # Linux: kilobytes
        rss_mb = rss_kb / 1024
        if TIME_BIN:  # keep only the command's own messages
            stderr = stderr.split("\tCommand being timed:")[0]
            stderr = re.sub(r"(?m)^Command exited with non-zero status \d+\n", "", stderr)
    if rc not in ok:
        raise RuntimeError(f"{' '.join(cmd)} exited with {rc}:\n{stderr.strip()[-2000:]}")
    return {"wall": wall, "rss_mb": rss_mb, "rc": rc, "stderr": stderr}


def interleaved_medians(commands: dict[str, list[str]], runs: int, warmups: int, ok=(0,)) -> dict[str, dict]:
    """Median wall time of each command, running them in turn ``runs`` times after warm-ups."""
    for _ in range(warmups):
        for cmd in commands.values():
            run_once(cmd, ok)
    walls = {name: [] for name in commands}
    for _ in range(runs):
        for name, cmd in commands.items():
            walls[name].append(run_once(cmd, ok)["wall"])
    return {name: {"median_s": statistics.median(w), "min_s": min(w), "max_s": max(w), "runs": len(w)}
            for name, w in walls.items()}


# --- data -----------------------------------------------------------------------------------

def load_arxiv_rows(shared: Path, n: int) -> list[dict]:
    """The first ``n`` rows of the arXiv corpora (uniform first), as {arxiv_id, title, abstract}."""
    corpora = sorted((shared / "corpora").glob("arxiv-*.jsonl.gz"),
                     key=lambda p: (p.name != "arxiv-2025-uniform.jsonl.gz", p.name))
    rows = []
    for path in corpora:
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                d = json.loads(line)
                rows.append({"arxiv_id": d["arxiv_id"], "title": d["title"], "abstract": d["abstract"]})
                if len(rows) == n:
                    return rows
    raise SystemExit(f"bench: only {len(rows)} arXiv rows in {shared / 'corpora'}, {n} wanted")


def write_jsonl(path: Path, rows: list[dict], repeat: int = 1) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for _ in range(repeat):
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")


def tokenise_floor_rate(path: Path) -> float:
    """Rows per second at which ``path`` is read, decoded, lower-cased and regex-tokenised."""
    t0 = time.perf_counter()
    n = 0
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            d = json.loads(line)
            TOKEN.findall(f"{d.get('title') or ''}. {d['abstract']}".lower())
            n += 1
    return n / (time.perf_counter() - t0)


def strip_outer(value: str) -> str:
    """A BibTeX value without its outer braces or quotes (``{{Title}}`` -> ``Title``)."""
    v = value.strip()
    if len(v) >= 2 and v[0] == '"' and v[-1] == '"':
        v = v[1:-1].strip()
    while len(v) >= 2 and v[0] == "{" and v[-1] == "}" and _one_group(v):
        v = v[1:-1].strip()
    return v


def _one_group(v: str) -> bool:
    """True when the opening brace of ``v`` is closed by its last character."""
    depth = 0
    for i, ch in enumerate(v):
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            return i == len(v) - 1
    return False


def bib_abstracts(paths: list[Path]) -> list[dict]:
    """{id, title, abstract} of every entry with an abstract in the .bib files."""
    import bibtexparser

    rows = []
    for path in paths:
        text = path.read_text(encoding="utf-8", errors="replace")
        library = bibtexparser.parse_string(text, parse_stack=[])
        for entry in library.entries:
            fields = {f.key.lower(): f.value for f in entry.fields}
            abstract = fields.get("abstract")
            if isinstance(abstract, str) and strip_outer(abstract):
                title = fields.get("title")
                rows.append({"id": entry.key, "title": strip_outer(title) if isinstance(title, str) else "",
                             "abstract": strip_outer(abstract)})
    return rows


# --- the five measurements --------------------------------------------------------------

def bench_startup(tagger: list[str], tmp: Path, rows: list[dict], runs: int, warmups: int) -> dict:
    one = tmp / "one.txt"
    one.write_text(rows[0]["abstract"].strip() + "\n", encoding="utf-8")
    out = run_once([*tagger, "label", str(one), "-f", "jsonl"])  # sanity: it labels
    commands = {
        "floor_import_numpy": [sys.executable, "-c", "import numpy"],
        "help": [*tagger, "--help"],
        "label_one": [*tagger, "label", str(one), "-f", "jsonl"],
    }
    res = interleaved_medians(commands, runs, warmups)
    floor = res["floor_import_numpy"]["median_s"]
    res["help_vs_floor"] = res["help"]["median_s"] / floor
    res["label_one_vs_floor"] = res["label_one"]["median_s"] / floor
    res["label_one_sanity_rc"] = out["rc"]
    return res


def bench_throughput(tagger: list[str], tmp: Path, rows: list[dict], runs: int) -> dict:
    src = tmp / "rows.jsonl"
    write_jsonl(src, rows)
    floors = [tokenise_floor_rate(src) for _ in range(3)]
    outs = {1: tmp / "out-jobs1.jsonl", 2: tmp / "out-jobs2.jsonl"}
    walls, rss, load = {1: [], 2: []}, [], []
    for _ in range(runs):
        for jobs in (1, 2):
            load.append(os.getloadavg()[0])
            r = run_once([*tagger, "label", str(src), "-f", "jsonl", "--jobs", str(jobs), "-o", str(outs[jobs])],
                         measure_rss=True)
            walls[jobs].append(r["wall"])
            if jobs == 1:
                rss.append(r["rss_mb"])
    n = len(rows)
    rate = {jobs: n / statistics.median(w) for jobs, w in walls.items()}
    best = {jobs: n / min(w) for jobs, w in walls.items()}
    floor = statistics.median(floors)
    return {
        "rows": n,
        "runs": runs,
        "floor_rows_per_s": floor,
        "jobs1_rows_per_s": rate[1],
        "jobs2_rows_per_s": rate[2],
        "jobs1_best_rows_per_s": best[1],
        "jobs2_best_rows_per_s": best[2],
        "jobs1_wall_s": walls[1],
        "jobs2_wall_s": walls[2],
        "load_average_1min_before_runs": load,
        "jobs1_vs_floor": rate[1] / floor,
        "jobs2_vs_jobs1": rate[2] / rate[1],
        "jobs2_output_identical": outs[1].read_bytes() == outs[2].read_bytes(),
        "output_lines": outs[1].read_bytes().count(b"\n"),
        "peak_rss_mb": max(rss),
    }


def bench_memory(tagger: list[str], tmp: Path, rows: list[dict], repeat: int) -> dict:
    big = tmp / "rows-repeated.jsonl"
    write_jsonl(big, rows, repeat=repeat)
    out = tmp / "out-big.jsonl"
    r = run_once([*tagger, "label", str(big), "-f", "jsonl", "--jobs", "1", "-o", str(out)], measure_rss=True)
    n = len(rows) * repeat
    lines = out.read_bytes().count(b"\n")
    big.unlink()
    out.unlink()
    return {"records": n, "output_lines": lines, "peak_rss_mb": r["rss_mb"], "wall_s": r["wall"],
            "rows_per_s": n / r["wall"], "method": "/usr/bin/time -v" if TIME_BIN else "os.wait4 ru_maxrss"}


def bench_size(tmp: Path) -> dict:
    """Build a wheel from a copy of the working tree, install it into a directory, measure it."""
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", ".benchmarks", ".venv"))
    wheels, target = tmp / "wheels", tmp / "target"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "-q"]
    try:
        subprocess.run([*pip, "wheel", "--no-deps", "-w", str(wheels), str(src)], check=True, capture_output=True)
    except subprocess.CalledProcessError:  # e.g. offline: build with the venv's own setuptools
        subprocess.run([*pip, "wheel", "--no-deps", "--no-build-isolation", "-w", str(wheels), str(src)],
                       check=True, capture_output=True)
    wheel = next(wheels.glob("tagger-*.whl"))
    subprocess.run([*pip, "install", "--no-deps", "--target", str(target), str(wheel)], check=True, capture_output=True)
    pkg = target / "tagger"

    def size(d: Path) -> int:
        return sum(p.stat().st_size for p in d.rglob("*") if p.is_file())

    models = pkg / "resources" / "models"
    return {
        "wheel": wheel.name,
        "wheel_mb": wheel.stat().st_size / 1e6,
        "installed_mb": size(pkg) / 1e6,
        "installed_model_mb": size(models) / 1e6 if models.is_dir() else None,
        "installed_files": sum(1 for p in pkg.rglob("*") if p.is_file()),
    }


def bench_bib(tagger: list[str], tmp: Path, shared: Path, runs: int) -> dict:
    probe = run_once([*tagger, "bib", "--help"], ok=range(256))
    if probe["rc"] != 0:
        first = (probe["stderr"].strip().splitlines() or ["?"])[-1]
        return {"skipped": f"this tagger has no `bib` command yet ({first.strip()})"}
    copies = tmp / "bib"
    copies.mkdir()
    for p in sorted((shared / "bib" / "real").glob("*.bib")):
        shutil.copyfile(p, copies / p.name)  # copyfile: the copies are writable, the originals untouched
    files = sorted(copies.glob("*.bib"))
    rows = bib_abstracts(files)
    src = tmp / "bib-abstracts.jsonl"
    write_jsonl(src, rows)
    commands = {
        "bib_check": [*tagger, "bib", "--check", *map(str, files)],
        "label": [*tagger, "label", str(src), "-f", "jsonl", "-o", str(tmp / "bib-out.jsonl")],
    }
    check = run_once(commands["bib_check"], ok=(0, 1, 2))
    res = interleaved_medians(commands, runs, warmups=0, ok=(0, 1, 2))
    res.update({
        "files": len(files),
        "abstracts": len(rows),
        "bib_check_rc": check["rc"],
        "bib_check_stderr_lines": len(check["stderr"].splitlines()),
        "bib_vs_label": res["bib_check"]["median_s"] / res["label"]["median_s"],
    })
    return res


def bench_bib_recovery(tagger: list[str], tmp: Path, runs: int) -> dict:
    gen = REPO / "tests" / "bib_cases_2" / "11-perf-many-unclosed-braces.py"
    files = {}
    for n in (40, 0):
        d = tmp / f"bib-perf-{n}"
        d.mkdir()
        subprocess.run([sys.executable, str(gen), str(n)], cwd=d, check=True)
        files[n] = d / "perf.bib"
    commands = {"broken": [*tagger, "bib", "--check", str(files[40])], "clean": [*tagger, "bib", "--check", str(files[0])]}
    broken = run_once(commands["broken"], ok=(0, 1, 2))
    res = interleaved_medians(commands, runs, warmups=0, ok=(0, 1, 2))
    res.update({
        "entries": 3000, "broken_entries": 40, "broken_mb": files[40].stat().st_size / 1e6,
        "broken_rc": broken["rc"], "broken_stderr_lines": len(broken["stderr"].splitlines()),
        "broken_stderr_bytes": len(broken["stderr"].encode()),
        "broken_vs_clean": res["broken"]["median_s"] / res["clean"]["median_s"],
    })
    return res


# --- report -----------------------------------------------------------------------------------

def machine_info() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numpy

    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                                text=True).stdout.strip()
    except OSError:
        commit = ""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "cores_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "platform": platform.platform(),
        "commit": commit,
        "load_average_start": os.getloadavg(),
    }


def yes(ok: bool) -> str:
    return "yes" if ok else "**no**"


def table(r: dict) -> str:
    t = TARGETS
    lines = ["| Figure | Measured | Beside | Ratio | Target | Met |", "|---|---:|---:|---:|---|---|"]

    def row(*cells):
        lines.append("| " + " | ".join(cells) + " |")

    if "startup" in r:
        _table_main(r, row)
    b = r["bib"]
    if "skipped" in b:
        row("`tagger bib --check`", "skipped", b["skipped"], "", f"<= {t['bib_vs_label']:g}x label", "")
    else:
        row(f"`tagger bib --check`, {b['files']} files, {b['abstracts']:,} abstracts",
            f"{b['bib_check']['median_s']:.2f} s", f"{b['label']['median_s']:.2f} s (`label` of the same)",
            f"{b['bib_vs_label']:.2f}x", f"<= {t['bib_vs_label']:g}x label", yes(b["bib_vs_label"] <= t["bib_vs_label"]))
    v = r.get("bib_recovery")
    if v:
        row(f"`tagger bib --check`, {v['entries']:,} entries ({v['broken_mb']:.1f} MB), {v['broken_entries']} broken",
            f"{v['broken']['median_s']:.2f} s, {v['broken_stderr_lines']} stderr lines "
            f"({v['broken_stderr_bytes']:,} B)", f"{v['clean']['median_s']:.2f} s (none broken)",
            f"{v['broken_vs_clean']:.2f}x", f"<= {t['bib_broken_vs_clean']:g}x clean",
            yes(v["broken_vs_clean"] <= t["bib_broken_vs_clean"]))
    return "\n".join(lines)


def _table_main(r: dict, row) -> None:
    t = TARGETS
    s = r["startup"]
    floor_ms = f"{s['floor_import_numpy']['median_s'] * 1000:.0f} ms (`import numpy`)"
    row("start-up `tagger --help`", f"{s['help']['median_s'] * 1000:.0f} ms", floor_ms,
        f"{s['help_vs_floor']:.2f}x", f"<= {t['help_vs_floor']}x floor", yes(s["help_vs_floor"] <= t["help_vs_floor"]))
    row("start-up `tagger label` one abstract", f"{s['label_one']['median_s'] * 1000:.0f} ms", floor_ms,
        f"{s['label_one_vs_floor']:.2f}x", f"<= {t['label_one_vs_floor']:g}x floor",
        yes(s["label_one_vs_floor"] <= t["label_one_vs_floor"]))
    p = r["throughput"]
    row(f"throughput `--jobs 1`, {p['rows']:,} rows", f"{p['jobs1_rows_per_s']:,.0f} /s "
        f"(best {p['jobs1_best_rows_per_s']:,.0f})",
        f"{p['floor_rows_per_s']:,.0f} /s (read+tokenise)", f"{p['jobs1_vs_floor']:.2f}x",
        f">= {t['jobs1_vs_floor']}x floor", yes(p["jobs1_vs_floor"] >= t["jobs1_vs_floor"]))
    row(f"throughput `--jobs 2`, {p['rows']:,} rows", f"{p['jobs2_rows_per_s']:,.0f} /s "
        f"(best {p['jobs2_best_rows_per_s']:,.0f})",
        f"{p['jobs1_rows_per_s']:,.0f} /s (`--jobs 1`)", f"{p['jobs2_vs_jobs1']:.2f}x",
        f">= {t['jobs2_vs_jobs1']}x jobs 1", yes(p["jobs2_vs_jobs1"] >= t["jobs2_vs_jobs1"]))
    row("`--jobs 2` output byte-identical to `--jobs 1`", "yes" if p["jobs2_output_identical"] else "no", "", "",
        "identical", yes(p["jobs2_output_identical"]))
    m = r["memory"]
    growth = m["peak_rss_mb"] / p["peak_rss_mb"]
    row(f"peak RSS, {p['rows']:,} rows", f"{p['peak_rss_mb']:.0f} MB", "", "", f"< {t['peak_rss_mb']:g} MB",
        yes(p["peak_rss_mb"] < t["peak_rss_mb"]))
    row(f"peak RSS, {m['records']:,} records", f"{m['peak_rss_mb']:.0f} MB", f"{p['peak_rss_mb']:.0f} MB "
        f"({p['rows']:,} rows)", f"{growth:.2f}x", f"< {t['peak_rss_mb']:g} MB, flat (<= {t['rss_growth']}x)",
        yes(m["peak_rss_mb"] < t["peak_rss_mb"] and growth <= t["rss_growth"]))
    z = r["size"]
    if "error" in z:
        row("installed `tagger` directory", "failed", "", "", f"< {t['installed_mb']:g} MB", "**no**")
    else:
        model = f"model {z['installed_model_mb']:.1f} MB" if z["installed_model_mb"] is not None else "no model found"
        row("installed `tagger` directory", f"{z['installed_mb']:.1f} MB", f"{model}; wheel {z['wheel_mb']:.1f} MB",
            "", f"< {t['installed_mb']:g} MB", yes(z["installed_mb"] < t["installed_mb"]))


def machine_text(r: dict) -> str:
    m = r["machine"]
    head = (f"{m['date']}; {m['cpu']}, {m['cores']} cores ({m['cores_usable']} usable); Python {m['python']}, "
            f"numpy {m['numpy']}; {m['platform']}; commit {m['commit']}; load average "
            f"{m['load_average_start'][0]:.2f} at start, {m['load_average_end'][0]:.2f} at end.\n")
    if "startup" not in r:
        return head + f"tagger run as: {r['tagger']}; --bib-only run, medians of {r['bib']['bib_check']['runs']} runs."
    return (head +
            f"tagger run as: {r['tagger']}; {'quick' if r['quick'] else 'full'} run; "
            f"start-up medians of {r['startup']['help']['runs']} runs, throughput medians of "
            f"{r['throughput']['runs']} run(s); peak RSS by {r['memory']['method']}.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=REPO.parent / "shared", help="shared data directory [../shared]")
    ap.add_argument("--quick", action="store_true", help="2,000 rows and fewer repetitions")
    ap.add_argument("--json", type=Path, metavar="OUT", help="write all figures to this JSON file")
    ap.add_argument("--bib-only", action="store_true", help="only the .bib figures (5 and 6)")
    args = ap.parse_args(argv)

    if args.bib_only and not (args.shared / "bib" / "real").is_dir():
        print(f"bench: {args.shared}/bib/real not found; nothing measured. Pass --shared DIR to point at it.")
        return 0
    if not args.bib_only and not (args.shared / "corpora").is_dir():
        print(f"bench: shared data directory {args.shared} (with corpora/) not found; nothing measured. "
              "Pass --shared DIR to point at it.")
        return 0

    n_rows = 2_000 if args.quick else 20_000
    startup_runs, warmups = (5, 1) if args.quick else (15, 2)
    runs = 1 if args.quick else 3
    tagger, how = tagger_command()
    results = {"quick": args.quick, "tagger": how, "targets": TARGETS, "machine": machine_info()}
    log(f"tagger: {how}")

    with tempfile.TemporaryDirectory(prefix="tagger-bench-") as d:
        tmp = Path(d)
        CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(tmp / "pycache")
        if not args.bib_only:
            _bench_main(results, tagger, tmp, args.shared, n_rows, startup_runs, warmups, runs)
        log("bib: tagger bib --check vs tagger label")
        results["bib"] = bench_bib(tagger, tmp, args.shared, runs)
        if "skipped" in results["bib"]:
            log(f"bib: skipped: {results['bib']['skipped']}")
        else:
            log("bib recovery: 40 broken entries in 3,000 vs none")
            results["bib_recovery"] = bench_bib_recovery(tagger, tmp, runs)
    results["machine"]["load_average_end"] = os.getloadavg()

    print(f"## tagger benchmark\n\n{machine_text(results)}\n\n{table(results)}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        log(f"figures written to {args.json}")
    return 0


def _bench_main(results: dict, tagger, tmp: Path, shared: Path, n_rows: int, startup_runs: int, warmups: int,
                runs: int) -> None:
    """Figures 1 to 4."""
    rows = load_arxiv_rows(shared, n_rows)
    log(f"start-up: {startup_runs} runs after {warmups} warm-up(s)")
    results["startup"] = bench_startup(tagger, tmp, rows, startup_runs, warmups)
    log(f"throughput: {n_rows:,} rows, --jobs 1 and 2, {runs} run(s) each")
    results["throughput"] = bench_throughput(tagger, tmp, rows, runs)
    log(f"memory: {n_rows * 5:,} records, --jobs 1")
    results["memory"] = bench_memory(tagger, tmp, rows, repeat=5)
    log("size: pip wheel + pip install --target")
    try:
        results["size"] = bench_size(tmp)
    except (subprocess.CalledProcessError, StopIteration) as e:
        detail = getattr(e, "stderr", b"") or b""
        results["size"] = {"error": f"{e}: {detail.decode('utf-8', 'replace')[-1000:]}"}
        log(f"size: failed: {results['size']['error']}")


if __name__ == "__main__":
    sys.exit(main())
