#!/usr/bin/env python3
"""Fails when files of one Rust crate depend on each other in a cycle.

For each crate of the project (core/, bindings/ffi, bindings/python, cli/, bench/) the
checker walks the module tree from the crate roots (`src/lib.rs`, `src/main.rs`,
`src/bin/*.rs`) through the `mod name;` declarations, so every module maps to its file
(`a.rs` or `a/mod.rs`). A file depends on another when it names an item of that file's
module: `use crate::...`, `use super::...`, a `crate::a::b::item` or `super::item` path in
code, or a path through a module alias a `use` brought in (`use crate::store;` then
`store::sqlite::open`). Not dependencies: a parent declaring a child (`mod child;`), and a
module naming itself or its own descendants (`self::child::Item`, `crate::a::child` from
`a`): that is containment. Inline `mod x { ... }` blocks belong to their file; inline
blocks under `#[cfg(test)]` (unit tests) are skipped.

Each cycle is reported as a chain of files; the exit status is 1 on any cycle that is not
in ALLOWED_CYCLES, and on an ALLOWED_CYCLES entry that no longer exists (the list only
shrinks). `--self-test` runs the checker on a temporary tree with a known cycle.

Usage: scripts/check_import_cycles.py [--self-test] [REPO_ROOT]
"""

from __future__ import annotations

import re
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

#: The crate directories checked, relative to the repository root.
CRATES = ("core", "bindings/ffi", "bindings/python", "cli", "bench")

#: Cycles still allowed, each as the set of its files (relative to the repository root),
#: with what would break it. The checker fails when a listed cycle no longer exists, so
#: this list only shrinks.
ALLOWED_CYCLES: dict[frozenset[str], str] = {}

Module = tuple[str, ...]


@dataclass
class Cycle:
    """A cycle found: one chain of files through it, and every file of it."""

    chain: list[str]
    files: frozenset[str]


@dataclass
class Crate:
    """The module tree of one crate root: module path to file and back."""

    files: dict[Module, Path] = field(default_factory=dict)
    modules: dict[Path, Module] = field(default_factory=dict)


# -- source text --------------------------------------------------------------------------

_RAW_STRING = re.compile(r'b?r(#*)"')


def strip_comments_and_strings(text: str) -> str:
    """Blanks comments, string and char literals, keeping offsets and newlines."""
    out: list[str] = []
    i, n = 0, len(text)

    def blank(segment: str) -> str:
        return "".join(c if c == "\n" else " " for c in segment)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(blank(text[i:j]))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(blank(text[i:j]))
            i = j
        elif (m := _RAW_STRING.match(text, i)) and (i == 0 or not _ident(text[i - 1])):
            end = text.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(blank(text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(blank(text[i : j + 1]))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}'), or else a lifetime ('a).
            m2 = re.match(r"'(\\.[^']*|[^'\\])'", text[i:])
            if m2:
                out.append(blank(m2.group(0)))
                i += len(m2.group(0))
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident(c: str) -> bool:
    return c.isalnum() or c == "_"


def _matching_brace(text: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(text)):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(text)


_INLINE_MOD = re.compile(r"\bmod\s+(\w+)\s*\{")
_CFG_TEST = re.compile(
    r"#\[cfg\((test|all\(test[^\]]*)\)\]\s*(#\[[^\]]*\]\s*)*(pub(\([^)]*\))?\s+)?$"
)


def inline_modules(code: str) -> list[tuple[int, int, str, bool]]:
    """The inline `mod x { ... }` blocks: (start, end, name, is_test)."""
    blocks = []
    for m in _INLINE_MOD.finditer(code):
        end = _matching_brace(code, m.end() - 1)
        is_test = bool(_CFG_TEST.search(code[max(0, m.start() - 300) : m.start()]))
        blocks.append((m.start(), end, m.group(1), is_test))
    return blocks


# -- module tree --------------------------------------------------------------------------

_MOD_DECL = re.compile(r"\bmod\s+(\w+)\s*;")


def build_crate(root_file: Path) -> Crate:
    """Walks `mod name;` declarations from a crate root to every module file."""
    crate = Crate()
    pending: list[tuple[Module, Path]] = [((), root_file)]
    while pending:
        module, path = pending.pop()
        if path in crate.modules:
            continue
        crate.files[module] = path
        crate.modules[path] = module
        code = strip_comments_and_strings(path.read_text(encoding="utf-8"))
        if path.name in ("lib.rs", "main.rs", "mod.rs") or path.parent.name == "bin":
            child_dir = path.parent
        else:
            child_dir = path.parent / path.stem
        for m in _MOD_DECL.finditer(code):
            name = m.group(1)
            for candidate in (child_dir / f"{name}.rs", child_dir / name / "mod.rs"):
                if candidate.is_file():
                    pending.append((module + (name,), candidate))
                    break
    return crate


def crate_roots(crate_dir: Path) -> list[Path]:
    """The crate roots of one package: src/lib.rs, src/main.rs, src/bin/*.rs."""
    src = crate_dir / "src"
    roots = [p for p in (src / "lib.rs", src / "main.rs") if p.is_file()]
    roots += sorted((src / "bin").glob("*.rs")) if (src / "bin").is_dir() else []
    return roots


# -- paths named in a file ----------------------------------------------------------------

_USE = re.compile(r"(?<![\w$])use\s+([^;]*);")
_PATH = re.compile(r"(?<![\w$:])((?:crate|super|self|\w+)(?:\s*::\s*\w+)+)")
_VIS_IN = re.compile(r"pub\s*\(\s*in\s+[^)]*\)")


def split_top(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for j, c in enumerate(text):
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:j])
            start = j + 1
    parts.append(text[start:])
    return [p for p in parts if p]


def resolve(segs: list[str], here: Module) -> Module | None:
    """An absolute module path for a path written in module `here`, or None if external."""
    if not segs:
        return None
    if segs[0] == "crate":
        return tuple(segs[1:])
    base = list(here)
    i = 0
    if segs[0] == "self":
        i = 1
    else:
        while i < len(segs) and segs[i] == "super":
            if not base:
                return None
            base.pop()
            i += 1
        if i == 0:
            return None
    return tuple(base + segs[i:])


def owning_file(path: Module, crate: Crate) -> Path | None:
    """The file of the longest prefix of `path` that is a module of the crate."""
    for k in range(len(path), -1, -1):
        if path[:k] in crate.files:
            return crate.files[path[:k]]
    return None


def dependencies(path: Path, crate: Crate) -> set[Path]:
    """The files of `crate` whose items the file at `path` names."""
    file_module = crate.modules[path]
    code = strip_comments_and_strings(path.read_text(encoding="utf-8"))
    code = _VIS_IN.sub(lambda m: " " * len(m.group(0)), code)
    blocks = inline_modules(code)

    def module_at(offset: int) -> Module | None:
        module = file_module
        for start, end, name, is_test in blocks:
            if start <= offset <= end:
                if is_test:
                    return None
                module = module + (name,)
        return module

    named: list[tuple[Module, Module]] = []  # (absolute path named, module naming it)
    aliases: dict[tuple[Module, str], Module] = {}
    use_spans: list[tuple[int, int]] = []
    for m in _USE.finditer(code):
        use_spans.append((m.start(), m.end()))
        here = module_at(m.start())
        if here is None:
            continue
        raw = re.sub(r"\s+as\s+", "\x00as\x00", m.group(1))
        for segs, alias in expand_use_tree(raw):
            target = resolve(segs, here)
            if target is None:
                continue
            named.append((target, here))
            if alias and target in crate.files:
                aliases[(here, alias)] = target
    for m in _PATH.finditer(code):
        if any(s <= m.start() < e for s, e in use_spans):
            continue
        here = module_at(m.start())
        if here is None:
            continue
        segs = [s for s in re.split(r"\s*::\s*", m.group(1)) if s]
        target = resolve(segs, here)
        if target is None and (here, segs[0]) in aliases:
            target = aliases[(here, segs[0])] + tuple(segs[1:])
        if target is not None:
            named.append((target, here))

    deps: set[Path] = set()
    for target, here in named:
        if target[: len(here)] == here or target[: len(file_module)] == file_module:
            continue  # itself or its own descendants: containment
        owner = owning_file(target, crate)
        if owner is not None and owner != path:
            deps.add(owner)
    return deps


def expand_use_tree(raw: str) -> Iterator[tuple[list[str], str | None]]:
    """The paths of a use tree, each with the name it binds (None for `*`).

    `as` is written NUL-as-NUL, so whitespace can go.
    """
    text = re.sub(r"\s+", "", raw)
    for part_prefix, part in _flatten([], text):
        alias = None
        if "\x00as\x00" in part:
            part, alias = part.split("\x00as\x00", 1)
        segs = part_prefix + [s for s in part.split("::") if s]
        if not segs:
            continue
        if segs[-1] == "*":
            yield segs[:-1], None
        elif segs[-1] == "self":
            yield segs[:-1], alias or (segs[-2] if len(segs) > 1 else None)
        else:
            yield segs, alias or segs[-1]


def _flatten(prefix: list[str], text: str) -> Iterator[tuple[list[str], str]]:
    for part in split_top(text):
        if "{" in part:
            head, _, rest = part.partition("{")
            yield from _flatten(prefix + [s for s in head.split("::") if s], rest[:-1])
        else:
            yield prefix, part


# -- cycles -------------------------------------------------------------------------------


def strongly_connected(graph: dict[Path, set[Path]]) -> list[list[Path]]:
    """Tarjan's strongly connected components with more than one file."""
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    on_stack: set[Path] = set()
    components: list[list[Path]] = []
    counter = [0]

    def visit(v: Path) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def chain(component: list[Path], graph: dict[Path, set[Path]]) -> list[Path]:
    """One cycle through the component's first file, as a chain of files (BFS)."""
    members = set(component)
    start = component[0]
    previous: dict[Path, Path] = {}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in previous:
                    previous[w] = v
                    nxt.append(w)
        frontier = nxt
    return component


def find_cycles(repo: Path, crates: tuple[str, ...] = CRATES) -> list[Cycle]:
    """Every cycle between files of one crate: a chain of files through it and all its files."""
    found: list[Cycle] = []
    for crate_dir in crates:
        for root in crate_roots(repo / crate_dir):
            crate = build_crate(root)
            graph = {p: dependencies(p, crate) for p in crate.modules}
            for component in strongly_connected(graph):
                found.append(
                    Cycle(
                        chain=[
                            p.relative_to(repo).as_posix()
                            for p in chain(component, graph)
                        ],
                        files=frozenset(
                            p.relative_to(repo).as_posix() for p in component
                        ),
                    )
                )
    return found


def check(
    repo: Path, allowed: dict[frozenset[str], str], crates: tuple[str, ...] = CRATES
) -> int:
    """Prints the cycles found; 1 on a cycle not allowed or an allowed cycle gone."""
    status = 0
    seen: set[frozenset[str]] = set()
    for cycle in find_cycles(repo, crates):
        seen.add(cycle.files)
        shown = " -> ".join(cycle.chain)
        if cycle.files in allowed:
            print(f"allowed cycle ({allowed[cycle.files]}): {shown}")
            continue
        status = 1
        print(f"import cycle: {shown}")
        if len(cycle.files) > len(cycle.chain) - 1:
            print(f"  (all files of this cycle: {', '.join(sorted(cycle.files))})")
    for members in allowed:
        if members not in seen:
            status = 1
            print(
                f"allowed cycle no longer exists, remove it from ALLOWED_CYCLES: {sorted(members)}"
            )
    if status == 0:
        print("no import cycles between files of a crate")
    return status


def self_test() -> int:
    """The checker fails on a temporary tree with a known cycle, passes once it is broken."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        src = repo / "demo" / "src"
        (src / "store").mkdir(parents=True)
        (src / "lib.rs").write_text("mod error;\nmod lifecycle;\npub mod store;\n")
        (src / "error.rs").write_text(
            "use crate::lifecycle::State;\n// use crate::store::x; (a comment)\n"
            "#[cfg(test)]\nmod tests { use crate::store::sqlite::Db; }\n"
        )
        (src / "lifecycle.rs").write_text(
            "pub struct State;\nfn f() -> crate::error::Error { todo!() }\n"
        )
        (src / "store" / "mod.rs").write_text(
            "mod sqlite;\npub use self::sqlite::Db;\n"
        )
        (src / "store" / "sqlite.rs").write_text(
            'use super::Db as _;\npub struct Db;\nconst S: &str = "crate::error::E";\n'
        )
        crates = ("demo",)
        cycles = find_cycles(repo, crates)
        want = [["demo/src/error.rs", "demo/src/lifecycle.rs", "demo/src/error.rs"]]
        got = [cycle.chain for cycle in cycles]
        failures = []
        if got != want:
            failures.append(f"expected {want}, found {got}")
        if check(repo, {}, crates) != 1:
            failures.append("a cycle did not fail the check")
        if check(repo, {frozenset({"demo/src/nothing.rs"}): "gone"}, crates) != 1:
            failures.append(
                "a listed cycle that no longer exists did not fail the check"
            )
        (src / "lifecycle.rs").write_text("pub struct State;\n")
        if check(repo, {}, crates) != 0:
            failures.append("the tree without a cycle failed the check")
    for failure in failures:
        print(f"self-test failed: {failure}")
    print("self-test passed" if not failures else "self-test FAILED")
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    args = argv[1:]
    if args and args[0] == "--self-test":
        return self_test()
    repo = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    return check(repo, ALLOWED_CYCLES)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
