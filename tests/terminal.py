"""Driving ``tagger annotate`` through a pseudo-terminal: pexpect runs it, pyte keeps the
screen it draws (prompt_toolkit redraws only what changed, so the raw bytes alone do not
show what is on screen)."""

import os
import sys
import time

import pytest

pexpect = pytest.importorskip("pexpect", reason="pexpect (the test extra) drives the terminal tests")
pyte = pytest.importorskip("pyte", reason="pyte (the test extra) reads the screen in the terminal tests")

ENTER, TAB, CTRL_C, LEFT = "\r", "\t", "\x03", "\x1b[D"


class Terminal:
    """``tagger ARGS...`` in a pseudo-terminal of ``cols`` x ``rows``."""

    def __init__(self, args, cwd, cols=120, rows=45, env=None):
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.Stream(self.screen)
        e = dict(os.environ, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", **(env or {}))
        self.child = pexpect.spawn(sys.executable, ["-m", "tagger", *map(str, args)], cwd=str(cwd), env=e,
                                   dimensions=(rows, cols), encoding="utf-8", timeout=60)
        self.output = ""

    def text(self) -> str:
        return "\n".join(line.rstrip() for line in self.screen.display)

    def _pump(self, wait=0.05) -> bool:
        try:
            while True:
                data = self.child.read_nonblocking(65536, timeout=wait)
                self.output += data
                self.stream.feed(data)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False

    def wait(self, *texts, timeout=60):
        """Until every one of ``texts`` is on screen; fails showing the screen."""
        end = time.monotonic() + timeout
        while True:
            alive = self._pump()
            screen = self.text()
            if all(t in screen for t in texts):
                return screen
            if not alive or time.monotonic() > end:
                raise AssertionError(f"not on screen: {[t for t in texts if t not in screen]}\n{screen}")

    def press(self, *keys, then=None):
        """Send ``keys`` one at a time; with ``then``, wait until it is on screen."""
        for k in keys:
            self.child.send(k)
            time.sleep(0.05)
        if then:
            return self.wait(*([then] if isinstance(then, str) else then))

    def __del__(self):  # a test that failed half-way leaves no program running
        if self.child.isalive():
            self.child.close(force=True)

    def finish(self, timeout=60) -> int:
        """Wait for the program to end; its exit status."""
        self.child.expect(pexpect.EOF, timeout=timeout)
        self.output += self.child.before or ""
        self.child.close()
        return self.child.exitstatus
