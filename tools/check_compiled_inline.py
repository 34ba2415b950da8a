#!/usr/bin/env python3
"""Compiled mode's one rule that no compiler checks: a function body inside an
`#if EPGRAPH_DETAIL_CORE_DEFINITIONS` block (or in a header included from one) is declared
EPGRAPH_DETAIL_CORE_INLINE, never `inline`. Otherwise src/compiled.cpp, which defines these
bodies once for compiled mode, emits nothing for a body it does not call itself, and every
compiled-mode program calling it fails to link (stop 47's CI, Graph::writable).

Usage: check_compiled_inline.py <include-dir>. Prints each offending line; exit 1 if any.
"""
import pathlib
import re
import sys

INLINE = re.compile(r"^(\[\[nodiscard\]\]\s+)?inline\s+(?!constexpr\s)")  # variables may be inline
INCLUDE = re.compile(r'^#include\s+"([^"]+)"')


def scan(path, whole, bad, seen):
    if path in seen:
        return
    seen.add(path)
    depth, block_depth = 0, None
    for number, line in enumerate(path.read_text().splitlines(), 1):
        inside = whole or block_depth is not None
        if line.startswith("#if"):
            depth += 1
            if block_depth is None and "EPGRAPH_DETAIL_CORE_DEFINITIONS" in line:
                block_depth = depth
            continue
        if line.startswith("#endif"):
            if block_depth == depth:
                block_depth = None
            depth -= 1
            continue
        if not inside:
            continue
        if INLINE.match(line):
            bad.append(f"{path}:{number}: {line}")
        included = INCLUDE.match(line)
        if included and not whole:
            scan((path.parent / included.group(1)).resolve(), True, bad, seen)


def main():
    root = pathlib.Path(sys.argv[1])
    bad, seen = [], set()
    for header in sorted(root.rglob("*.hpp")):
        text = header.read_text()
        if "#if EPGRAPH_DETAIL_CORE_DEFINITIONS" in text:
            scan(header.resolve(), False, bad, seen)
    for line in bad:
        print(line)
    if bad:
        print("use EPGRAPH_DETAIL_CORE_INLINE there (see include/epgraph/detail/compiled_mode.hpp)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
