"""No import cycles in kafkapy: no two modules import each other, directly or through others.

Builds kafkapy's import graph with grimp (import-linter's engine; imports under TYPE_CHECKING count too,
so a cycle cannot hide behind one) and fails listing every strongly connected group of modules (each such
group holds at least one cycle; a pair that imports each other is the smallest). Packages count as the
modules their `__init__` is, so a package importing its child that imports the package back is a cycle
as well.
"""

from __future__ import annotations

import grimp

ROOT = "kafkapy"


def import_cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative), sorted."""
    modules = sorted(graph.modules)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            targets = edges[node]
            while i < len(targets):
                target = targets[i]
                i += 1
                if target not in index:
                    work.append((node, i))
                    work.append((target, 0))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return sorted(found)


def _describe(graph: grimp.ImportGraph, component: list[str]) -> str:
    members = set(component)
    pairs = [f"{a} -> {b}" for a in component for b in sorted(graph.find_modules_directly_imported_by(a))
             if b in members]
    return "{" + ", ".join(component) + "}: " + "; ".join(pairs)


def test_the_finder_finds_pairs_and_longer_cycles() -> None:
    graph = grimp.ImportGraph()
    for name in ("p", "p.a", "p.b", "p.c", "p.d", "p.e"):
        graph.add_module(name)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.a")
    graph.add_import(importer="p.c", imported="p.d")
    graph.add_import(importer="p.d", imported="p.e")
    graph.add_import(importer="p.e", imported="p.c")
    graph.add_import(importer="p.e", imported="p.a")
    assert import_cycles(graph) == [["p.a", "p.b"], ["p.c", "p.d", "p.e"]]


def test_kafkapy_has_no_import_cycles() -> None:
    graph = grimp.build_graph(ROOT, cache_dir=None)
    cycles = import_cycles(graph)
    assert not cycles, "import cycles:\n" + "\n".join(_describe(graph, c) for c in cycles)
