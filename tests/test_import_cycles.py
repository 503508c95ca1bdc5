"""No module of the package imports itself back: grimp's import graph of ``bpe_studio``,
imports inside functions included (they run as soon as the function does), has no cycle, nor
has the graph of its packages (a package imports another when one of its own modules does).

Imports under ``if TYPE_CHECKING:`` are left out: they never run, they only name types.
import-linter's contracts (pyproject.toml) keep the stages in their order; this test also
catches a circle inside one stage, which no layer contract sees.
"""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp")

# Cycles known today, each with the reason it is still there. An entry whose cycle has gone
# fails the test below: delete it then.
KNOWN_CYCLES: dict[frozenset[str], str] = {}


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("bpe_studio", exclude_type_checking_imports=True)


def strongly_connected(nodes: list[str], edges: dict[str, set[str]]) -> list[frozenset[str]]:
    """The cycles of a directed graph: its strongly connected components of more than one
    node, or of one node that imports itself (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(sorted(edges[root])))]
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in edges[node]:
                        found.append(frozenset(component))
    return found


def describe(cycle: frozenset[str], edges: dict[str, set[str]]) -> str:
    inside = [f"{a} -> {b}" for a in sorted(cycle) for b in sorted(edges[a] & cycle)]
    return "; ".join(inside)


def module_edges(graph) -> dict[str, set[str]]:
    return {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}


def package_of(graph, module: str) -> str:
    """A package stands for itself (its ``__init__``); a module for the package holding it,
    but the top package's own modules (``__main__``, the facade) stand for themselves: they
    are the entry points, above every package."""
    if graph.find_children(module) or module.count(".") == 1:
        return module
    return module.rpartition(".")[0]


def test_strongly_connected_finds_cycles_and_only_them():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "d"}, "e": set()}
    assert sorted(map(sorted, strongly_connected(sorted(edges), edges))) == [
        ["a", "b", "c"],
        ["d"],
    ]
    assert strongly_connected(["x", "y"], {"x": {"y"}, "y": set()}) == []


def test_function_level_imports_are_in_the_graph(graph):
    # merger.py imports kernel_start only inside a method (the compiled path, on first use).
    details = graph.get_import_details(
        importer="bpe_studio.core.encode.merging.merger",
        imported="bpe_studio.core.encode.merging.kernel_start",
    )
    assert details and all(d["line_contents"] == "from . import kernel_start" for d in details)


def test_no_module_import_cycle(graph):
    edges = module_edges(graph)
    cycles = strongly_connected(sorted(edges), edges)
    new = [describe(c, edges) for c in cycles if c not in KNOWN_CYCLES]
    assert not new, "import cycles: " + " | ".join(new)
    gone = [sorted(c) for c in KNOWN_CYCLES if c not in cycles]
    assert not gone, f"no longer a cycle, take it out of KNOWN_CYCLES: {gone}"


def test_no_package_import_cycle(graph):
    edges: dict[str, set[str]] = {}
    for module, targets in module_edges(graph).items():
        mine = package_of(graph, module)
        edges.setdefault(mine, set())
        edges[mine] |= {package_of(graph, t) for t in targets} - {mine}
    for target in set().union(*edges.values()) - set(edges):
        edges[target] = set()
    cycles = strongly_connected(sorted(edges), edges)
    assert not cycles, "package import cycles: " + " | ".join(describe(c, edges) for c in cycles)
