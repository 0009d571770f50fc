#!/usr/bin/env python3
"""The layering check of the runtime crate: reads every `crate::` / `super::` / `self::` path of
runtime/src (in `use` declarations and in code), resolves each to the file that defines the item
(following `pub use` re-exports), and fails on

- a cycle between files (two files that reach each other, directly or through others), and
- an edge against the layer order: a file may use its own layer and the layers below it only.

The layer order is the list in DESIGN.md between the lines `<!-- layers: bottom -->` and
`<!-- layers: top -->`, one module path a line (`- ffi`, `- view::extents`); a file belongs to the
layer of the longest module path that contains it. Test code (`tests.rs`, `*_tests.rs`, and an
inline `mod tests` at the end of a file) is exempt: tests may reach anything.

    python3 scripts/layers.py            # check runtime/src against DESIGN.md
    python3 scripts/layers.py --selftest # prove the check fails on planted edges

Runs in well under a second, without building.
"""

import os
import re
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "runtime", "src")
DESIGN = os.path.join(ROOT, "DESIGN.md")

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def module_of(path):
    """The module path of a source file: lib.rs is [], a/mod.rs and a.rs are [a]."""
    rel = os.path.relpath(path, SRC)[: -len(".rs")].split(os.sep)
    if rel[-1] in ("lib", "mod"):
        rel = rel[:-1]
    return tuple(rel)


def strip_comments(text):
    """The code with comments, doc comments and string literals blanked (line numbers kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == '"' or (c in "rb" and re.match(r'(b?r#*"|b")', text[i:])):
            m = re.match(r'(b?r)(#*)"', text[i:])
            if m:  # raw string
                end = '"' + m.group(2)
                j = text.find(end, i + len(m.group(0)))
                j = n if j < 0 else j + len(end)
            else:
                j = i + (2 if c == "b" else 1)
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                j += 1
            out.append("".join(ch if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:]):  # a char literal, not a lifetime
            m = re.match(r"'(\\.|[^\\'])'", text[i:])
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_tests(code):
    """The code before an inline `#[cfg(test)] mod tests {` (test modules close their file)."""
    m = re.search(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", code)
    return code[: m.start()] if m else code


def expand_use(tree):
    """The paths of a `use` tree: `crate::{a::B, c::{D, E as F}}` gives crate::a::B, crate::c::D, crate::c::E."""
    tree = re.sub(r"\s+as\s+" + IDENT, "", tree)  # renames do not change what is used
    tree = re.sub(r"\s+", "", tree)

    def split_top(s):
        parts, depth, cur = [], 0, ""
        for ch in s:
            depth += (ch == "{") - (ch == "}")
            if ch == "," and depth == 0:
                parts.append(cur)
                cur = ""
            else:
                cur += ch
        if cur:
            parts.append(cur)
        return parts

    def walk(prefix, s):
        brace = s.find("{")
        if brace >= 0 and s.endswith("}"):
            head = [p for p in s[:brace].split("::") if p]
            for part in split_top(s[brace + 1 : -1]):
                yield from walk(prefix + head, part)
        else:
            yield prefix + [p for p in s.split("::") if p]

    yield from walk([], tree)


class Crate:
    def __init__(self, src=SRC, overrides=None):
        self.files = {}  # module path -> file
        self.code = {}  # file -> code without comments
        for dirpath, _, names in os.walk(src):
            for name in names:
                if name.endswith(".rs"):
                    path = os.path.join(dirpath, name)
                    self.files[module_of(path)] = path
        for path in self.files.values():
            with open(path, encoding="utf-8") as f:
                text = f.read()
            if overrides and path in overrides:
                text = overrides[path] + "\n" + text
            self.code[path] = strip_comments(text)
        self.reexports = {path: self._reexports(code) for path, code in self.code.items()}

    def _reexports(self, code):
        """Names a file re-exports: name -> path (relative or absolute), and glob sources."""
        names, globs = {}, []
        for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", code):
            for path in expand_use(m.group(1)):
                if not path:
                    continue
                if path[-1] == "*":
                    globs.append(path[:-1])
                elif path[-1] != "self":
                    names[path[-1]] = path
        return names, globs

    def absolute(self, module, path):
        """An absolute module path for `path` as written in `module`."""
        if not path:
            return None
        if path[0] == "crate":
            return tuple(path[1:])
        if path[0] == "super":
            base = list(module)
            while path and path[0] == "super":
                if not base:
                    return None
                base.pop()
                path = path[1:]
            return tuple(base) + tuple(path)
        if path[0] == "self":
            return tuple(module) + tuple(path[1:])
        if path[0] in ("std", "core", "alloc", "pyo3", "cudarc", "half", "num_complex", "ndarray", "dlspan"):
            return None
        # A bare path in a `use` is relative to the module (a child module) in 2018+ only when it
        # names a child: resolve it if the child exists.
        if tuple(module) + (path[0],) in self.files:
            return tuple(module) + tuple(path)
        return None

    def defines(self, path, name):
        code = self.code[path]
        return re.search(
            r"\b(?:struct|enum|union|trait|type|fn|const|static|mod|macro_rules!)\s+" + re.escape(name) + r"\b", code
        )

    def resolve(self, target, depth=0):
        """The file that defines the item at absolute `target` (a module path plus item)."""
        if depth > 20:
            return None
        for cut in range(len(target), -1, -1):
            module = target[:cut]
            if module in self.files:
                break
        else:
            return None
        path = self.files[module]
        rest = target[cut:]
        if not rest:
            return path
        name = rest[0]
        names, globs = self.reexports[path]
        if name in names and not self.defines(path, name):
            to = self.absolute(module, names[name])
            if to is not None:
                found = self.resolve(to + tuple(rest[1:]), depth + 1)
                if found:
                    return found
        if not self.defines(path, name):
            for glob in globs:
                to = self.absolute(module, glob)
                if to is not None and to in self.files and self.defines(self.files[to], name):
                    return self.files[to]
        return path

    @staticmethod
    def inline_modules(code):
        """The inline `mod name { ... }` blocks of a file: (start, end, name) of each body."""
        blocks = []
        for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{", code):
            depth, i = 1, m.end()
            while i < len(code) and depth:
                depth += (code[i] == "{") - (code[i] == "}")
                i += 1
            blocks.append((m.end(), i, m.group(1)))
        return blocks

    def edges(self):
        """(from file, to file, line) for every path from one file to another, tests excluded."""
        out = set()
        for module, path in self.files.items():
            name = os.path.basename(path)
            if name == "tests.rs" or name.endswith("_tests.rs"):
                continue
            code = without_tests(self.code[path])
            blocks = self.inline_modules(code)

            def scope(at):
                # A path inside an inline module is relative to it (`super::` names the file).
                return tuple(module) + tuple(n for (a, b, n) in blocks if a <= at < b)

            paths = []
            for m in re.finditer(r"\buse\s+([^;]+);", code):
                line = code.count("\n", 0, m.start()) + 1
                for p in expand_use(m.group(1)):
                    paths.append((p, line, scope(m.start())))
            for m in re.finditer(r"(?<![:\w])((?:crate|super|self)(?:::" + IDENT + r")+)", code):
                line = code.count("\n", 0, m.start()) + 1
                paths.append((m.group(1).split("::"), line, scope(m.start())))
            # Child modules declared here are structure, not use.
            children = {tuple(module) + (c,) for c in re.findall(r"\bmod\s+(" + IDENT + r")\s*;", code)}
            for p, line, here in paths:
                target = self.absolute(here, p)
                if target is not None and here != tuple(module) and target[: len(here)] == here:
                    continue  # inside the inline module itself
                if target is None or target in children:
                    continue
                to = self.resolve(target)
                if to and to != path:
                    # A parent re-exporting or declaring its children: not an edge.
                    if module_of(to)[: len(module)] == tuple(module) and os.path.basename(path) in ("mod.rs", "lib.rs"):
                        continue
                    out.add((path, to, line))
        return out


def layers():
    with open(DESIGN, encoding="utf-8") as f:
        text = f.read()
    m = re.search(r"<!-- layers: bottom -->(.*?)<!-- layers: top -->", text, re.S)
    if not m:
        sys.exit("DESIGN.md has no layer list between <!-- layers: bottom --> and <!-- layers: top -->")
    order = []
    for line in m.group(1).splitlines():
        lm = re.match(r"\s*[-*]\s+`?([\w:]+)`?", line)
        if lm:
            order.append(tuple(lm.group(1).split("::")) if lm.group(1) != "lib" else ())
    return order


def layer_of(module, order):
    best, index = None, None
    for i, prefix in enumerate(order):
        if module[: len(prefix)] == prefix and (best is None or len(prefix) > len(best)):
            best, index = prefix, i
    return index


def cycles(edges):
    graph = defaultdict(set)
    for a, b, _ in edges:
        graph[a].add(b)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in list(graph):
        if v not in index:
            strong(v)
    return out


def rel(path):
    return os.path.relpath(path, ROOT)


def check(crate, order):
    problems = []
    edges = crate.edges()
    for comp in cycles(edges):
        inner = sorted((rel(a), rel(b), line) for a, b, line in edges if a in comp and b in comp)
        problems.append("cycle between " + ", ".join(rel(p) for p in comp) + ":\n" + "\n".join(
            f"      {a}:{line} -> {b}" for a, b, line in inner))
    for a, b, line in sorted(edges):
        la, lb = layer_of(module_of(a), order), layer_of(module_of(b), order)
        if la is None:
            problems.append(f"{rel(a)} is in no layer of DESIGN.md's list")
        elif lb is not None and lb > la:
            problems.append(
                f"{rel(a)}:{line} uses {rel(b)}, a higher layer ({'::'.join(order[la]) or 'lib'} < {'::'.join(order[lb]) or 'lib'})"
            )
    return sorted(set(problems)), edges


def selftest(order):
    """Plants, beside an edge b -> a of the crate (a below b), the edge a -> b, and checks that the
    check reports it both as a cycle and as an edge against the layer order."""
    crate = Crate()
    clean, edges = check(crate, order)
    a, b = next(
        (a, b) for (b, a, _) in sorted(edges)
        if layer_of(module_of(a), order) < layer_of(module_of(b), order) and module_of(b)
    )
    planted = Crate(overrides={a: "use crate::" + "::".join(module_of(b)) + "::Planted;"})
    found, _ = check(planted, order)
    new = [p for p in found if p not in clean]
    assert any("higher layer" in p and rel(a) in p for p in new), new
    assert any(p.startswith("cycle") and rel(a) in p for p in new), new
    print(f"selftest: a planted edge {rel(a)} -> {rel(b)} is reported as a cycle and against the layer order")


def main():
    order = layers()
    if "--selftest" in sys.argv:
        selftest(order)
        return
    problems, edges = check(Crate(), order)
    if "--edges" in sys.argv:
        for a, b, line in sorted(edges):
            print(f"{rel(a)}:{line} -> {rel(b)}")
    if problems:
        print(f"layering: {len(problems)} problems in {len(edges)} edges", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        sys.exit(1)
    print(f"layering: {len(edges)} edges between {len(Crate().files)} files, no cycle, none against the layer order")


if __name__ == "__main__":
    main()
