#!/bin/sh
# Rewrites the golden files of the JSON saver (tests/data/json_golden/*.json) from the current
# saver, after a deliberate change of the text it writes: review `git diff tests/data` after.
# SPDX-License-Identifier: BSD-3-Clause
# Usage: tools/update_json_golden.sh [build-dir]   (default: build; epgraph_json_tests is built)
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build"}
cmake --build "$build" --target epgraph_json_tests
EPGRAPH_UPDATE_JSON_GOLDEN=1 "$build/tests/epgraph_json_tests" "[streaming]"
git -C "$root" status --short tests/data/json_golden
