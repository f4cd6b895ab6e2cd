"""The import graph of crates/incast-core/src: `crate::` / `super::` paths between files.

Issue 46's figures: the cycles through sim/world.rs and the imports that point from a lower
layer up. A file's layer is its top-level module's, in this order (low to high):

  0 base      units, rng, engine, config_types, files, params, huge_pages, metrics_table
  1 models    cm, transport, rdma, edge, workload, topology (state machines and formats that
              know no world)
  2 scenario  scenario, and hpcc_format (the HPCC simulator's files, converted to and from
              scenarios)
  3 elements  net, mech, nic, host, metrics, and sim/world.rs + sim/ev.rs (the state and the
              events the elements share)
  4 run       the rest of sim

An edge counts where a file's code (comments and its trailing `#[cfg(test)]` module left out)
names a path `crate::a::b...` (`$crate::` in a macro too) or `super::...` that resolves to
another file, or a path `child::...` through one of its own child modules (`mod child;` in
a/mod.rs, a registry's `pfc::Pfc` in mech/mod.rs). lib.rs, the crate's root, re-exports from
every layer and is left out.

    python tools/import_graph.py        # summary
    python tools/import_graph.py -v     # and every upward edge, every cycle's files
"""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from feature_names import SRC, code_lines  # noqa: E402

# Tarjan's strongly connected sets, as the Python package's own cycle test finds them.
from test_import_graph import cycles as strongly_connected  # noqa: E402

LAYERS = [
    {"units", "rng", "engine", "config_types", "files", "params", "huge_pages", "metrics_table"},
    {"cm", "transport", "rdma", "edge", "workload", "topology"},
    {"scenario", "hpcc_format"},
    {"net", "mech", "nic", "host", "metrics", "sim/world", "sim/ev"},
    {"sim"},
]


def module_of(rel: str) -> list[str]:
    """`a/b/mod.rs` -> [a, b]; `a/b.rs` -> [a, b]; `lib.rs` -> []."""
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def layer(rel: str) -> int:
    if rel == "lib.rs":
        return len(LAYERS)  # the root, above every layer
    mod = module_of(rel)
    key2 = "/".join(mod[:2])
    top = mod[0] if mod else "lib"
    for index, names in enumerate(LAYERS):
        if key2 in names:
            return index
    for index, names in enumerate(LAYERS):
        if top in names:
            return index
    raise SystemExit(f"{rel}: no layer for module {top!r} (add it to LAYERS)")


def files() -> dict[tuple, str]:
    out = {}
    for path in SRC.rglob("*.rs"):
        rel = path.relative_to(SRC).as_posix()
        if path.name != "tests.rs":  # a test module, not part of the graph
            out[tuple(module_of(rel))] = rel
    return out


def resolve(parts: list[str], modules: dict[tuple, str]) -> str | None:
    for end in range(len(parts), 0, -1):
        hit = modules.get(tuple(parts[:end]))
        if hit:
            return hit
    return None


PATH = re.compile(r"\b(crate|super)((?:::\w+)+)")
# A path that starts with a bare name (not after `::`, `.` or a letter): `pfc::Pfc`.
CHILD = re.compile(r"(?<![\w:.$])([a-z_]\w*)((?:::\w+)+)")
GROUP = re.compile(r"\b(crate|super)((?:::\w+)*)::\{([^{}]*)\}")


def edges() -> dict[str, set[str]]:
    modules = files()
    graph = {rel: set() for rel in modules.values()}
    for mod, rel in modules.items():
        text = "\n".join(code_lines((SRC / rel).read_text()))
        # `super` in module a::b (a/b.rs or a/b/mod.rs) is a.
        parent = list(mod[:-1])
        paths = []
        for m in GROUP.finditer(text):
            for item in m.group(3).split(","):
                item = item.strip().split(" as ")[0]
                if item and item != "self":
                    paths.append((m.group(1), m.group(2) + "::" + item.replace(" ", "")))
        paths += [(m.group(1), m.group(2)) for m in PATH.finditer(text)]
        # `child::...`: a path through one of this module's own child modules.
        children = {m[-1] for m in modules if len(m) == len(mod) + 1 and m[: len(mod)] == mod}
        for m in CHILD.finditer(text):
            if m.group(1) in children:
                paths.append(("self", "::" + m.group(1) + m.group(2)))
        for root, tail in paths:
            parts = [p for p in tail.split("::") if p]
            base = {"crate": [], "super": parent, "self": list(mod)}[root]
            while parts and parts[0] == "super":
                base, parts = base[:-1], parts[1:]
            target = resolve(base + parts, modules)
            if target and target != rel and "lib.rs" not in (rel, target):
                graph[rel].add(target)
    return graph


def main() -> int:
    verbose = "-v" in sys.argv
    graph = edges()
    n_edges = sum(len(t) for t in graph.values())
    print(f"{len(graph)} files, {n_edges} import edges")
    cycles = strongly_connected(graph)
    world = [c for c in cycles if "sim/world.rs" in c]
    sizes = [len(c) for c in cycles]
    print(f"cycles (strongly connected sets of files): {len(cycles)}, sizes {sizes}")
    print(f"files in a cycle through sim/world.rs: {len(world[0]) if world else 0}")
    up = sorted((a, b) for a, bs in graph.items() for b in bs if layer(b) > layer(a))
    print(f"imports from a lower layer up: {len(up)}")
    if verbose:
        for a, b in up:
            print(f"  up: {a} (layer {layer(a)}) -> {b} (layer {layer(b)})")
        for comp in cycles:
            print(f"  cycle of {len(comp)}: {' '.join(comp)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
