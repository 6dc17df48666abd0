"""The terminal screen of ``tagger annotate``, drawn with prompt_toolkit (a full-screen
application): the record's title and abstract (wrapped, scrollable), the taxonomy facet by
facet with a key beside each label, and a line of keys.  Only this module imports
prompt_toolkit, and only ``tagger annotate`` imports this module.
"""

from __future__ import annotations

import textwrap

from .session import label_keys

HELP = """\
Keys
  1-9 0 a-z A-Z  toggle the label shown beside the key
                 (in a facet marked "one", choosing a label clears the others)
  Enter          done: save this record and show the next
  Tab            skip: leave it unsaved; it comes back at the end
  <  or  Left    back: show the record done before (Enter saves a change)
  -  or  Backspace  undo: the last toggle, else the last save
  Up Down PgUp PgDn  scroll the abstract
  ?  or  F1      this help (any key closes it)
  Ctrl-C Ctrl-D Ctrl-Q  quit (the record on screen is not saved)

Each record is in the corpus file as soon as it is done.  Run the same
command again to go on where you stopped."""


class Screen:
    """The application around a :class:`~tagger.annotate.session.Session`; ``assistant``
    (or None) is polled twice a second for background retraining (its ``tick(session)``
    returns a status line)."""

    def __init__(self, session, assistant=None, title="tagger annotate"):
        self.session, self.assistant, self.title = session, assistant, title
        self.keys = label_keys(session.taxonomy)
        self.key_of = {lb: k for k, lb in self.keys.items()}
        self.scroll, self.help_on, self.status = 0, False, ""
        self._last_id = None

    # -- drawing --------------------------------------------------------------------------
    def _width(self):
        from prompt_toolkit.application import get_app

        return max(20, get_app().output.get_size().columns)

    def _header(self):
        s = self.session
        row = s.current
        if row is None:
            return [("class:header", f" {self.title}: all {len(s.store.rows)} records are done "
                                     "(< to go back, Ctrl-C to quit) ")]
        n, total = s.position()
        state = "saved, editing" if s.back_pos is not None else "new"
        if s.suggested:
            state += ", suggested by the model"
        return [("class:header", f" [{n}/{total}] {row['id']}  ({state})  {row.get('source', '')} ")]

    def _text_lines(self):
        row = self.session.current
        if row is None:
            return []
        w = self._width() - 2
        lines = []
        if row.get("title"):
            lines += [("class:title", ln) for ln in textwrap.wrap(" ".join(row["title"].split()), w)]
        for para in row["abstract"].split("\n\n"):
            lines += [("", ln) for ln in textwrap.wrap(" ".join(para.split()), w)] + [("", "")]
        return lines

    def _text(self):
        if self.session.current is not None and self.session.current["id"] != self._last_id:
            self._last_id, self.scroll = self.session.current["id"], 0
        lines = self._text_lines()
        self.scroll = max(0, min(self.scroll, len(lines) - 1))
        out = []
        for style, ln in lines[self.scroll:]:
            out += [(style, " " + ln), ("", "\n")]
        return out

    def _labels(self):
        if self.help_on:
            return [("", HELP)]
        s = self.session
        on = set(s.labels)
        w = self._width()
        out = []
        for f in s.taxonomy.facets:
            kind = "one" if f.kind == "exclusive" else "any"
            out.append(("class:facet", f" {f.name or f.id} ({kind})\n"))
            cells = []
            for lb in f.labels:
                short = lb.id.split(":", 1)[1]
                mark = ("(*)" if lb.id in on else "( )") if f.kind == "exclusive" else ("[x]" if lb.id in on else "[ ]")
                cells.append((lb.id in on, f"{mark} {self.key_of[lb.id]} {short}"))
            cw = max(len(c) for _, c in cells) + 2
            per = max(1, (w - 2) // cw)
            for i in range(0, len(cells), per):
                out.append(("", "  "))
                for chosen, c in cells[i:i + per]:
                    out.append(("class:on" if chosen else "", c.ljust(cw)))
                out.append(("", "\n"))
        return out

    def _footer(self):
        msg = self.session.message or self.status
        keys = " Enter done  Tab skip  < back  - undo  ? help  Ctrl-C quit "
        return [("class:footer", keys), ("", "  "), ("class:message", msg)]

    # -- running --------------------------------------------------------------------------
    def run(self) -> None:
        """Show the screen until the annotator quits."""
        import asyncio

        from prompt_toolkit.application import Application
        from prompt_toolkit.filters import Condition
        from prompt_toolkit.keys import Keys
        from prompt_toolkit.key_binding import KeyBindings
        from prompt_toolkit.layout import HSplit, Layout, Window
        from prompt_toolkit.layout.controls import FormattedTextControl
        from prompt_toolkit.layout.dimension import Dimension
        from prompt_toolkit.styles import Style

        kb = KeyBindings()
        s = self.session

        @kb.add(Keys.Any, filter=Condition(lambda: self.help_on))  # added first: the keys below win where they match
        def _close_help(event):
            self.help_on = False

        def act(fn):
            def handler(event):
                if self.help_on:
                    self.help_on = False
                    return
                fn()
            return handler

        for key, label in self.keys.items():
            kb.add(key)(act(lambda label=label: s.toggle(label)))
        for k in ("enter", "c-j"):
            kb.add(k)(act(s.done))
        kb.add("tab")(act(s.skip))
        for k in ("<", "left"):
            kb.add(k)(act(s.back))
        for k in ("-", "backspace"):
            kb.add(k)(act(s.undo))

        @kb.add("?")
        @kb.add("f1")
        def _help(event):
            self.help_on = not self.help_on

        def scroll(n):
            def handler(event):
                self.scroll = max(0, self.scroll + n)
            return handler

        kb.add("down")(scroll(1))
        kb.add("up")(scroll(-1))
        kb.add("pagedown")(scroll(10))
        kb.add("pageup")(scroll(-10))

        @kb.add("c-c")
        @kb.add("c-d")
        @kb.add("c-q")
        def _quit(event):
            event.app.exit()

        body = HSplit([
            Window(FormattedTextControl(self._header), height=1),
            Window(FormattedTextControl(self._text), height=Dimension(min=3, weight=1), wrap_lines=False),
            Window(char="─", height=1, style="class:rule"),
            Window(FormattedTextControl(self._labels), height=Dimension(min=3, weight=1), wrap_lines=False),
            Window(FormattedTextControl(self._footer), height=1),
        ])
        style = Style.from_dict({"header": "reverse", "title": "bold", "facet": "bold underline",
                                 "on": "bold", "footer": "reverse", "message": "italic", "rule": ""})
        app = Application(layout=Layout(body), key_bindings=kb, full_screen=True, style=style, mouse_support=False)

        async def ticker():
            while True:
                await asyncio.sleep(0.5)
                if self.assistant is not None:
                    status = self.assistant.tick(s)
                    if status != self.status:
                        self.status = status
                        app.invalidate()

        app.run(pre_run=lambda: app.create_background_task(ticker()))
