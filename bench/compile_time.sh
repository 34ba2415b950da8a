#!/usr/bin/env bash
# Compile-time benchmark (issue 29): how long one translation unit that uses epgraph takes to
# compile, against one that uses nlohmann/json, measured in turns in one run.
#
# usage: bench/compile_time.sh [REPEATS]   (default 2; the minimum over the repeats is reported)
#
# Prints one line per unit and optimisation level:
#   bench=compile tu=<name> opt=O0|O2 seconds=<wall, min> peak_mb=<compiler's max RSS>
#         ratio_to_nlohmann=<seconds / the nlohmann unit's seconds at the same level>
# Units (written to a temporary folder, compiled with `$CXX -std=c++17 -c`, CXX defaults to g++):
#   nlohmann       #include <nlohmann/json.hpp>, parse one object
#   graph          #include <epgraph/epgraph.hpp>, build a two-node graph and print it
#   load_save      epgraph.hpp + archive/archive.hpp: load a .pt2, verify, print, save
#   pt2_passes     examples/pt2_passes.cpp (a real pass tool)
#   load_save_compiled, load_save_umbrella_compiled, pt2_passes_compiled
#                  the same in compiled mode (CMake option EPGRAPH_COMPILED): compiled with the
#                  macros epgraph::compiled gives its users, so the HostTensor entry points,
#                  ExportedProgram<HostTensor>'s members, Graph's larger members and the printer
#                  are declarations only. load_save_compiled includes the headers it uses
#                  (archive/load.hpp, archive/save.hpp, program/verify.hpp, ir/print.hpp), as the
#                  README advises; load_save_umbrella_compiled keeps epgraph.hpp and includes the
#                  entry-point headers; pt2_passes_compiled is unchanged. The script also builds
#                  the library (src/compiled.cpp) once and links load_save_compiled against it,
#                  to prove the unit is complete.
# Wall times on a shared machine vary; compare the ratios of one run (state the load: `uptime`
# is printed first).
# SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPEATS="${1:-2}"
CXX="${CXX:-g++}"
WORK="$(mktemp -d)"
trap 'rm -rf "${WORK}"' EXIT

cat >"${WORK}/nlohmann.cpp" <<'EOF'
#include <nlohmann/json.hpp>
int main() { return nlohmann::json::parse(R"({"a": 1})")["a"].get<int>(); }
EOF
cat >"${WORK}/graph.cpp" <<'EOF'
#include <epgraph/epgraph.hpp>
#include <iostream>
int main() {
  epgraph::Graph g;
  epgraph::Node* x = g.placeholder("x");
  epgraph::Node* r = g.call_function("torch.ops.aten.relu.default", {x});
  g.output({r});
  std::cout << g;
}
EOF
cat >"${WORK}/load_save.cpp" <<'EOF'
#include <epgraph/archive/archive.hpp>
#include <epgraph/epgraph.hpp>
#include <iostream>
int main(int argc, char** argv) {
  if (argc < 3) return 2;
  auto ep = epgraph::archive::load_archive<epgraph::HostTensor>(argv[1]);
  epgraph::verify(ep);
  std::cout << ep.graph();
  epgraph::archive::save_archive(ep, argv[2]);
}
EOF
cp "${ROOT}/examples/pt2_passes.cpp" "${WORK}/pt2_passes.cpp"

# The same four lines through the entry-point headers.
sed 's|#include <epgraph/archive/archive.hpp>|#include <epgraph/archive/load.hpp>\n#include <epgraph/archive/save.hpp>|' \
  "${WORK}/load_save.cpp" >"${WORK}/load_save_umbrella_compiled.cpp"
sed 's|#include <epgraph/epgraph.hpp>|#include <epgraph/ir/print.hpp>\n#include <epgraph/program/verify.hpp>|' \
  "${WORK}/load_save_umbrella_compiled.cpp" >"${WORK}/load_save_compiled.cpp"
cp "${WORK}/pt2_passes.cpp" "${WORK}/pt2_passes_compiled.cpp"

flags=(-std=c++17 -I"${ROOT}/include" -I"${ROOT}/examples" -DEPGRAPH_JSON_HAS_SIMDJSON=1 -c)
compiled_flags=(-DEPGRAPH_COMPILED=1 -DEPGRAPH_COMPILED_JSON=1 -DEPGRAPH_COMPILED_ARCHIVE=1
  -DEPGRAPH_STALE_NODE_CHECKS=1)
unit_flags() { [[ "$1" == *_compiled ]] && echo "${compiled_flags[@]}"; true; }
echo "# $(uptime)"
echo "# ${CXX}: $(${CXX} --version | head -n 1)"
declare -A best_s best_mb
units=(nlohmann graph load_save pt2_passes load_save_compiled load_save_umbrella_compiled
  pt2_passes_compiled)
for opt in O0 O2; do
  for ((r = 0; r < REPEATS; ++r)); do
    for u in "${units[@]}"; do  # in turns, so that a burst of load hits every unit
      /usr/bin/time -f "%e %M" -o "${WORK}/time" \
        "${CXX}" "${flags[@]}" $(unit_flags "${u}") "-${opt}" "${WORK}/${u}.cpp" -o "${WORK}/${u}.o"
      read -r s kb <"${WORK}/time"
      key="${u}/${opt}"
      if [[ -z "${best_s[${key}]:-}" ]] || awk "BEGIN{exit !(${s} < ${best_s[${key}]})}"; then
        best_s[${key}]="${s}"
      fi
      mb=$((kb / 1024))
      if [[ -z "${best_mb[${key}]:-}" || ${mb} -gt ${best_mb[${key}]} ]]; then
        best_mb[${key}]="${mb}"
      fi
    done
  done
  for u in "${units[@]}"; do
    key="${u}/${opt}"
    ratio=$(awk "BEGIN{printf \"%.2f\", ${best_s[${key}]} / ${best_s[nlohmann/${opt}]}}")
    echo "bench=compile tu=${u} opt=${opt} seconds=${best_s[${key}]} peak_mb=${best_mb[${key}]} ratio_to_nlohmann=${ratio}"
  done
done

# The compiled-mode unit links against the library: nothing it needs is missing.
"${CXX}" "${flags[@]}" "${compiled_flags[@]}" -O0 "${ROOT}/src/compiled.cpp" -o "${WORK}/lib.o"
"${CXX}" "${WORK}/load_save_compiled.o" "${WORK}/lib.o" -lzip -lsimdjson -o "${WORK}/load_save"
echo "# load_save_compiled links against src/compiled.cpp: ok"
