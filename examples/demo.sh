#!/bin/sh
# The README's main example: pt2_edit on the bundled program examples/data/decoder_block.json
# (a decoder block exported by torch 2.13 with tools/make_example_data.py).
#   examples/demo.sh [PT2_EDIT] [OUT_DIR]
# SPDX-License-Identifier: BSD-3-Clause
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tool=${1:-build/examples/pt2_edit}
out=${2:-build/demo}
input="$here/data/decoder_block.json"
mkdir -p "$out"

echo "== 1. The program as torch.export wrote it"
"$tool" show "$input"
echo
echo "== 2. Add a KV-cache buffer b_kv_cache of shape [1, 8, 128, 64], zero-filled"
"$tool" add-buffer "$input" --name b_kv_cache --dtype float32 --shape 1,8,128,64 --fill 0 \
  -o "$out/decoder_block_kv.json"
echo
echo "== 3. Validate the edited program (signature vs graph, canonical order, lint)"
"$tool" validate "$out/decoder_block_kv.json"
echo
echo "== 4. The edited program"
"$tool" show "$out/decoder_block_kv.json"
