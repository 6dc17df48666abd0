"""The terminal screen of ``tagger annotate``, drawn with prompt_toolkit (a full-screen
application): the record's title and abstract (wrapped, scrollable), the taxonomy facet by
facet with a key beside each label, and a line of keys.  The label panel takes the lines it
needs and the abstract the rest (3 lines at the least); when the labels still do not fit
(40 labels at 80x24), the panel shows them a page at a time, its last line saying what is
below (``]``/``[`` turn the pages; toggling a label turns to its page), and ``=`` lists every
label set.  Only this module imports
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
  ]  [           next / previous page of labels, when they do not all fit
  =              every label set on this record (any key closes it)
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
        self.label_top, self.follow, self.chosen_on = 0, None, False  # the label panel's page
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

    def _rows(self):
        from prompt_toolkit.application import get_app

        return max(8, get_app().output.get_size().rows)

    def _label_lines(self):
        """Every line of the label panel (a list of fragment lists), and the line of each label."""
        s = self.session
        on = set(s.labels)
        w = self._width()
        lines, where = [], {}
        for f in s.taxonomy.facets:
            kind = "one" if f.kind == "exclusive" else "any"
            lines.append([("class:facet", f" {f.name or f.id} ({kind})")])
            cells = []
            for lb in f.labels:
                short = lb.id.split(":", 1)[1]
                mark = ("(*)" if lb.id in on else "( )") if f.kind == "exclusive" else ("[x]" if lb.id in on else "[ ]")
                cells.append((lb.id, f"{mark} {self.key_of[lb.id]} {short}"))
            cw = max(len(c) for _, c in cells) + 2
            per = max(1, (w - 2) // cw)
            for i in range(0, len(cells), per):
                line = [("", "  ")]
                for lid, c in cells[i:i + per]:
                    where[lid] = len(lines)
                    line.append(("class:on" if lid in on else "", c.ljust(cw)))
                lines.append(line)
        return lines, where

    def _panel_height(self):
        """Lines for the label panel: all it needs, leaving the header, the rule, the footer
        and at least 3 lines of abstract; the abstract pane gets the rest."""
        from prompt_toolkit.layout.dimension import Dimension

        need = len(HELP.splitlines()) if self.help_on else len(self._label_lines()[0])
        if self.chosen_on:
            need = max(need, len(self._chosen_lines()))
        room = max(3, self._rows() - 3 - 3)
        return Dimension.exact(min(need, room))

    def _chosen_lines(self):
        s = self.session
        chosen = [lb for lb in s.taxonomy.label_ids if lb in set(s.labels)]
        lines = [f" Labels set on this record ({len(chosen)}; any key closes this):"]
        lines += [f"   {self.key_of[lb]} {lb}" for lb in chosen] or ["   none yet"]
        return lines

    def _labels(self):
        if self.help_on:
            return [("", HELP)]
        height = self._panel_height().preferred
        if self.chosen_on:
            return [("", "\n".join(self._chosen_lines()[:height]))]
        lines, where = self._label_lines()
        if len(lines) <= height:
            self.label_top = 0
            shown = lines
        else:  # pages of height - 1 lines, the last line saying what is below and above
            per = max(1, height - 1)
            if self.follow is not None and self.follow in where:  # a label toggled off screen: show it
                line = where[self.follow]
                if not self.label_top <= line < self.label_top + per:
                    self.label_top = (line // per) * per
            self.follow = None
            self.label_top = max(0, min(self.label_top, ((len(lines) - 1) // per) * per))
            shown = lines[self.label_top:self.label_top + per]
            page, pages = self.label_top // per + 1, (len(lines) - 1) // per + 1
            below = len(lines) - self.label_top - per
            more = f"{below} more lines of labels below" if below > 0 else "the last labels"
            shown = shown + [[("class:more", f" -- {more} (page {page}/{pages}): ] next  [ previous  "
                                             f"= labels set --")]]
        out = []
        for line in shown:
            out += line + [("", "\n")]
        return out

    def _footer(self):
        msg = self.session.message or self.status
        keys = " Enter done  Tab skip  < back  - undo  = set  ? help  Ctrl-C quit "
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

        @kb.add(Keys.Any, filter=Condition(lambda: self.help_on or self.chosen_on))  # first: the keys below win
        def _close_help(event):
            self.help_on = self.chosen_on = False

        def act(fn):
            def handler(event):
                if self.help_on or self.chosen_on:
                    self.help_on = self.chosen_on = False
                    return
                fn()
            return handler

        def toggle(label):
            s.toggle(label)
            self.follow = label  # on a paged panel, turn to the page that shows it

        for key, label in self.keys.items():
            kb.add(key)(act(lambda label=label: toggle(label)))

        def page(n):
            def go():
                self.label_top = max(0, self.label_top + n * max(1, self._panel_height().preferred - 1))
            return go

        kb.add("]")(act(page(1)))
        kb.add("[")(act(page(-1)))

        @kb.add("=")
        def _chosen(event):
            if self.help_on:
                self.help_on = False
            else:
                self.chosen_on = not self.chosen_on
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
            Window(FormattedTextControl(self._text), height=Dimension(min=1, weight=1), wrap_lines=False),
            Window(char="─", height=1, style="class:rule"),
            Window(FormattedTextControl(self._labels), height=self._panel_height, wrap_lines=False),
            Window(FormattedTextControl(self._footer), height=1),
        ])
        style = Style.from_dict({"header": "reverse", "title": "bold", "facet": "bold underline",
                                 "on": "bold", "footer": "reverse", "message": "italic", "rule": "",
                                 "more": "reverse"})
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
