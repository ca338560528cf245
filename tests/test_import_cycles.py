"""The package's import graph has no circles, function-level imports included (issue 32).

import-linter's ``acyclic_siblings`` contract (pyproject.toml) checks siblings; a package's
``__init__`` and its own submodules are no siblings, so this test looks at every edge grimp
finds (imports inside functions too) and asks for strongly connected components.
"""

import pytest

grimp = pytest.importorskip("grimp")  # installed with import-linter (the lint extra)

ROOT = "numbacuda_ufunc"

# Circles not broken yet, each a frozenset of modules: none (Device and Context, which need
# each other, share cuda/_driver.py).
KNOWN: set[frozenset] = set()


def _graph():
    graph = grimp.build_graph(ROOT)
    edges = {}
    for importer in graph.modules:
        for imported in graph.find_modules_directly_imported_by(importer):
            if imported == ROOT:
                # `from .. import _core`: the compiled engine is no Python file grimp sees,
                # so the import reads as one of the package root. It is no edge upward.
                details = graph.get_import_details(importer=importer, imported=imported)
                if all("_core" in d["line_contents"] for d in details):
                    continue
            edges.setdefault(importer, set()).add(imported)
    return graph.modules, edges


def _strongly_connected(nodes, edges):
    """Tarjan's algorithm, iterative (the graph is a few hundred modules deep at most)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            for w in children:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = set()
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.add(w)
                        if w == v:
                            break
                    out.append(frozenset(comp))
    return [c for c in out if len(c) > 1]


def test_import_graph_has_no_cycles():
    nodes, edges = _graph()
    cycles = [c for c in _strongly_connected(nodes, edges) if c not in KNOWN]
    assert not cycles, "import circles: " + "; ".join(
        " <-> ".join(sorted(c)) for c in cycles)


def test_scc_finder_sees_a_circle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _strongly_connected({"a", "b", "c", "d"}, edges) == [frozenset("abc")]
