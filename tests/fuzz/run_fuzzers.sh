#!/usr/bin/env bash
# Runs each epgraph fuzz target for SECONDS seconds on a seed corpus generated now into
# BUILD_DIR/fuzz-corpus/<target> (by make_fuzz_seeds; nothing is copied from ../shared).
# Exits non-zero when a target finds a crash, leak, sanitizer report or hang (libFuzzer writes
# the input to BUILD_DIR/fuzz-artifacts/<target>/); minimize it with
#   BUILD_DIR/tests/fuzz/<target> -minimize_crash=1 -runs=10000 <crash file>
# and commit it under tests/fuzz/regressions/<target>/ (replayed by the unit tests).
#
# usage: run_fuzzers.sh BUILD_DIR SECONDS [TARGET...]   (default: every target that was built)
#
# EPGRAPH_FUZZ_SEED: libFuzzer's -seed. 0 (the default here) picks a new random seed per run, for
# exploring; .ci/run passes a fixed seed so that CI's fuzz stage is reproducible (the same seed
# corpus and seed give the same mutations: a CI run that passes here passes there, and a new
# finding comes from exploring, where it is fixed and committed as a regression input).
# SPDX-License-Identifier: BSD-3-Clause
set -euo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
BUILD="$(cd "$1" && pwd)"
SECONDS_PER_TARGET="$2"
shift 2
BIN="${BUILD}/tests/fuzz"
TARGETS=("$@")
if [[ ${#TARGETS[@]} -eq 0 ]]; then
  for t in fuzz_json fuzz_archive fuzz_edits; do
    [[ -x "${BIN}/${t}" ]] && TARGETS+=("${t}")
  done
fi
if [[ ${#TARGETS[@]} -eq 0 ]]; then
  echo "no fuzz targets in ${BIN} (configure with clang and -DEPGRAPH_FUZZ=ON)" >&2
  exit 1
fi

CORPUS="${BUILD}/fuzz-corpus"
ARTIFACTS="${BUILD}/fuzz-artifacts"
rm -rf "${CORPUS}"
mkdir -p "${CORPUS}"
"${BIN}/make_fuzz_seeds" "${CORPUS}"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# The targets run side by side, EPGRAPH_FUZZ_JOBS at a time (default 2: the CI machines' cores),
# each for SECONDS; their reports are printed in the targets' order when all are done.
JOBS="${EPGRAPH_FUZZ_JOBS:-2}"
run_target() {  # run_target <target>: exit status 0 = nothing found
  local t="$1" dict=()
  mkdir -p "${ARTIFACTS}/${t}" "${CORPUS}/${t}"
  [[ "${t}" == fuzz_json && -f "$(dirname "$0")/json.dict" ]] && dict=(-dict="$(dirname "$0")/json.dict")
  # -rss_limit_mb / -malloc_limit_mb: an input that makes the loader allocate more than 1 GB is a
  # finding (the loaders must refuse absurd sizes); -timeout: 10 s for one input is a hang.
  "${BIN}/${t}" "${CORPUS}/${t}" "${dict[@]}" \
    -seed="${EPGRAPH_FUZZ_SEED:-0}" -max_total_time="${SECONDS_PER_TARGET}" -timeout=10 -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="${ARTIFACTS}/${t}/" 2>"${ARTIFACTS}/${t}.log"
}
mkdir -p "${ARTIFACTS}"
for t in "${TARGETS[@]}"; do
  while [[ $(jobs -rp | wc -l) -ge ${JOBS} ]]; do wait -n || true; done
  echo "=== ${t}: ${SECONDS_PER_TARGET}s"
  rm -f "${ARTIFACTS}/${t}.status"
  (
    rc=0
    run_target "${t}" || rc=$?
    echo "${rc}" >"${ARTIFACTS}/${t}.status"
  ) &
done
wait
status=0
for t in "${TARGETS[@]}"; do
  if [[ "$(cat "${ARTIFACTS}/${t}.status" 2>/dev/null)" != 0 ]]; then
    echo "!!! ${t} found a problem; see ${ARTIFACTS}/${t}.log and ${ARTIFACTS}/${t}/"
    tail -n 60 "${ARTIFACTS}/${t}.log"
    status=1
  fi
  echo "=== ${t}:"
  grep -E "^stat::number_of_executed_units|^Done [0-9]+ runs" "${ARTIFACTS}/${t}.log" || true
done
exit "${status}"
