"""Start-up cost of the terminal UI libraries considered for ``tagger annotate``.

Runs ``python -c "import ..."`` for each library's full-screen application modules in a fresh
interpreter, N times, and prints the median and the fastest wall time and the median CPU time beside
the bare interpreter's.  A library that is not installed is reported as such.

Usage: python benchmarks/tui_startup.py [N]   (in an environment with the libraries installed:
pip install prompt_toolkit textual urwid)
"""

import importlib.util
import statistics
import subprocess
import sys
import time

CANDIDATES = {
    "python (nothing imported)": ("", "pass"),
    "prompt_toolkit": ("prompt_toolkit",
                       "import prompt_toolkit.application, prompt_toolkit.layout, prompt_toolkit.key_binding"),
    "textual": ("textual", "import textual.app, textual.widgets"),
    "urwid": ("urwid", "import urwid"),
}


def timed(code, n):
    """``(median wall, fastest wall, median CPU)`` seconds of n fresh interpreters; CPU time
    (user + system, of the child) is what a busy machine disturbs least."""
    import resource

    wall, cpu = [], []
    for _ in range(n):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        wall.append(time.perf_counter() - t)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    return statistics.median(wall), min(wall), statistics.median(cpu)


def main(n=20):
    print(f"{'library':28} {'median ms':>10} {'fastest ms':>11} {'CPU ms':>8}")
    for name, (mod, code) in CANDIDATES.items():
        if mod and importlib.util.find_spec(mod) is None:
            print(f"{name:28} {'not installed':>22}")
            continue
        med, best, cpu = timed(code, n)
        print(f"{name:28} {med * 1000:10.1f} {best * 1000:11.1f} {cpu * 1000:8.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
