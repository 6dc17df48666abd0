"""XML read as a stream of elements (feeds, PubMed XML), through defusedxml: an entity
declaration or an external entity is refused (a "billion laughs" file cannot blow up memory),
and the input is parsed a line at a time as it arrives, each record element given when it
ends and then cleared, so memory stays flat however large the file (PubMed efetch files
run to gigabytes)."""

from __future__ import annotations

from .base import InputError, ReadOptions
from .stream import _READ_ERRORS, open_source


def local(tag: str) -> str:
    """An element's name without its namespace (``{http://www.w3.org/2005/Atom}entry`` -> ``entry``)."""
    return tag.rpartition("}")[2]


def text_of(elem) -> str:
    """All the text inside ``elem`` (its children's too, as ``<i>``, ``<sup>`` in PubMed
    titles), white space folded; "" for None."""
    return " ".join("".join(elem.itertext()).split()) if elem is not None else ""


def iter_records(path: str, opts: ReadOptions, names: set, what: str):
    """``(element, line)`` for each element whose local name is in ``names`` (not nested in
    another such element), when it ends; ``line``: the line where it starts.  The element is
    cleared once the caller asks for the next.  Raises :class:`InputError` naming the line for
    XML that is not well-formed or declares entities, after the records before it; ``what``
    names the format in messages."""
    import xml.etree.ElementTree as ET

    from defusedxml import DefusedXmlException
    from defusedxml.ElementTree import DefusedXMLParser

    src = open_source(path, opts.encoding)
    parser = DefusedXMLParser(target=ET.TreeBuilder())
    pull = ET.XMLPullParser(("start", "end"), _parser=parser)
    depth, start, root, n = 0, 0, None, 0
    try:
        for block, _ in src.blocks():
            for line in block.splitlines(keepends=True):
                n += 1
                try:
                    pull.feed(line)
                    events = list(pull.read_events())
                except ET.ParseError as e:
                    raise InputError(f"{path}:{n}: not well-formed {what} ({str(e).split(':')[0]})") from None
                except DefusedXmlException as e:
                    raise InputError(f"{path}:{n}: {what} that declares entities ({type(e).__name__}), refused "
                                     "as unsafe") from None
                for event, elem in events:
                    if root is None:
                        root = elem
                    if local(elem.tag) not in names:
                        continue
                    if event == "start":
                        depth += 1
                        if depth == 1:
                            start = n
                    else:
                        depth -= 1
                        if depth == 0:
                            yield elem, start
                            elem.clear()
                            if root is not elem:
                                for parent in (root, *root):  # drop what is done, children of the root or one below
                                    if len(parent) and parent[-1] is elem:
                                        parent.remove(elem)
                                        break
        try:
            pull.close()
        except ET.ParseError as e:
            raise InputError(f"{path}:{n}: {what} cut short ({str(e).split(':')[0]})") from None
    except _READ_ERRORS as e:
        raise InputError(f"{path}:{n + 1}: cannot read: {e}") from None
    finally:
        src.close()
