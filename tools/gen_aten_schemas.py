#!/usr/bin/env python3
"""Writes include/epgraph/ops/detail/aten_schema_table.hpp: every aten:: and prims:: operator schema of the
installed torch (run with torch 2.13.0), as c10 prints it, sorted by qualified name.

    python3 tools/gen_aten_schemas.py [OUTPUT]

The schema text is PyTorch's (BSD-3-Clause; see LICENSE). epgraph's tests parse every entry and
check that it prints back identically (tests/test_schema.cpp).
SPDX-License-Identifier: BSD-3-Clause
"""
import os
import sys

import torch

NAMESPACES = ("aten", "prims")


def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        root, "include", "epgraph", "ops", "detail", "aten_schema_table.hpp")
    schemas = {}
    for s in torch._C._jit_get_all_schemas():
        if s.name.split("::")[0] not in NAMESPACES:
            continue
        key = s.name + ("." + s.overload_name if s.overload_name else "")
        schemas[key] = str(s)
    version = torch.__version__.split("+")[0]
    lines = [
        "// Every aten:: and prims:: operator schema of torch %s (generated; do not edit)." % version,
        "// Written by tools/gen_aten_schemas.py. The schema text is PyTorch's (BSD-3-Clause; see",
        "// LICENSE). Data only: global_registry() (registry.hpp) registers it on first use, and",
        "// aten_schemas.hpp gives it its public names. SPDX-License-Identifier: BSD-3-Clause",
        "// clang-format off",
        "#pragma once",
        "",
        "#include <cstddef>",
        "#include <string_view>",
        "",
        "namespace epgraph {",
        "namespace detail {",
        "// Sorted by qualified name; parsed on first lookup.",
        "inline constexpr const char* aten_schema_texts[] = {",
    ]
    for key in sorted(schemas):
        lines.append("    %s," % c_string(schemas[key]))
    lines += [
        "};",
        "inline constexpr std::size_t aten_schema_text_count =",
        "    sizeof(aten_schema_texts) / sizeof(aten_schema_texts[0]);",
        'inline constexpr std::string_view aten_schema_texts_torch_version = "%s";' % version,
        "}  // namespace detail",
        "}  // namespace epgraph",
        "// clang-format on",
        "",
    ]
    with open(out, "w") as f:
        f.write("\n".join(lines))
    print("wrote %d schemas to %s" % (len(schemas), out))


if __name__ == "__main__":
    main()
