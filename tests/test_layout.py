"""The package layout, read from the import statements of tagger/ (no module is imported):
the CLI only on top, inference without training, and no import cycles."""

import ast
from pathlib import Path

from conftest import ROOT

PKG = ROOT / "tagger"


def _modules() -> dict[str, Path]:
    out = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = list(p.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


MODULES = _modules()


def _imports(name: str, path: Path) -> list[tuple[str, bool]]:
    """``[(imported tagger module, at module level?)]`` of one module; ``from X import y``
    names the submodule ``X.y`` when there is one, else ``X``."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = []

    def visit(node, top):
        for child in ast.iter_child_nodes(node):
            inner = top and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                found.extend((a.name, top) for a in child.names if a.name.split(".")[0] == "tagger")
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[: len(package.split(".")) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                if target.split(".")[0] != "tagger":
                    continue
                for a in child.names:
                    sub = f"{target}.{a.name}"
                    found.append((sub if sub in MODULES else target, top))
            visit(child, inner)

    visit(ast.parse(path.read_text(encoding="utf-8")), True)
    return found


GRAPH = {name: _imports(name, path) for name, path in MODULES.items()}


def _unit(module: str) -> str:
    """The room a module lives in: ``tagger.X`` for a subpackage X or a top-level module."""
    return ".".join(module.split(".")[:2])


def _cycle(edges: dict[str, set]) -> list | None:
    """One cycle of the directed graph ``edges``, or None."""
    state, stack = {}, []

    def dfs(n):
        state[n] = 1
        stack.append(n)
        for m in sorted(edges.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (c := dfs(m)):
                return c
        stack.pop()
        state[n] = 2
        return None

    for n in sorted(edges):
        if n not in state and (c := dfs(n)):
            return c
    return None


def test_the_graph_sees_the_packages():
    assert {"tagger.cli", "tagger.model", "tagger.model.inference", "tagger.pipeline.labeling",
            "tagger.evaluation.crossval"} <= set(GRAPH)
    assert ("tagger.pipeline.workers", True) in GRAPH["tagger.pipeline.labeling"]


def test_nothing_below_the_cli_imports_it():
    bad = sorted((m, t) for m, imps in GRAPH.items() if not m.startswith(("tagger.cli", "tagger.__main__"))
                 for t, _ in imps if t == "tagger.cli" or t.startswith("tagger.cli."))
    assert bad == []


def test_inference_imports_nothing_from_training():
    """Also not through another module: what `tagger label` loads never reaches training."""
    seen, todo = set(), ["tagger.model.inference"]
    while todo:
        m = todo.pop()
        for t, _ in GRAPH.get(m, ()):
            if t not in seen:
                seen.add(t)
                todo.append(t)
    assert "tagger.model.training" not in seen and "tagger.model.modeldir" not in seen


def test_no_cycle_between_modules():
    """Module-level imports only (an import inside a function runs after both modules are
    loaded, so it cannot fail as a cycle does); ``tagger`` itself, the lazy front door that
    imports nothing at module level, is a module like the others."""
    edges = {m: {t for t, top in imps if top and t != m} for m, imps in GRAPH.items()}
    assert _cycle(edges) is None


def test_no_cycle_between_packages():
    """The rooms (``tagger.model``, ``tagger.pipeline``, ``tagger.readers``, each top-level
    module) depend one way, imports inside functions counted too: a room that reaches back up,
    even lazily, is one whose place in the flow is unclear.  Left out: ``tagger/__init__.py``
    (``import tagger`` has every room below it, and its ``load``/``Prediction`` reach
    down lazily) and the ``__version__`` that training writes into a manifest from it."""
    edges: dict[str, set] = {}
    for m, imps in GRAPH.items():
        if m == "tagger":
            continue
        for t, _ in imps:
            a, b = _unit(m), _unit(t)
            if a != b and b != "tagger":
                edges.setdefault(a, set()).add(b)
    assert _cycle(edges) is None, _cycle(edges)


def test_no_module_is_much_over_400_lines():
    long = {m: n for m, p in MODULES.items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > 420}
    assert long == {}


#: the modules tagger/ may hold at its top level: the front doors (``__init__``, ``__main__``,
#: ``api``, ``dask``) and what every room shares; everything else lives in a room (cli/,
#: pipeline/, model/, evaluation/, readers/, writers/, bib/, annotate/, files/)
TOP_LEVEL = {"__init__", "__main__", "api", "dask", "taxonomy", "text", "query", "corpus", "errors", "resources",
             "wording"}


def test_no_new_module_at_the_top_level():
    """The architecture is read from the folder listing: a new module goes into the package
    it belongs to, or is added to :data:`TOP_LEVEL` on purpose."""
    top = {p.stem for p in PKG.glob("*.py")}
    assert top - TOP_LEVEL == set(), sorted(top - TOP_LEVEL)
    assert {"tagger.files.atomic", "tagger.files.limits", "tagger.evaluation.metrics"} <= set(MODULES)
