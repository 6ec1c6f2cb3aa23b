#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The model fixtures against their sources (issue 21): make_fixtures.py must reproduce the
# committed checkpoints byte for byte, and the PyTorch reference (reference.py, needs torch)
# must reproduce expected.json, which tests/lisp/tensor_hf_models.lisp compares our logits with.
# Usage: run.sh WORK_DIR. Exits 77 (a ctest skip) when no python3 has torch, after the
# fixture check.
set -euo pipefail
here="$(cd "${0%/*}" && pwd)"
work="$1"
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is not installed"; exit 77; }
rm -rf "$work" && mkdir -p "$work"
python3 "$here/make_fixtures.py" "$work"
for f in "$here"/tiny-*/* "$here"/bad-index-*/* "$here"/gguf/*.gguf "$here"/gguf/bad/*; do
  rel="${f#"$here"/}"
  cmp "$f" "$work/$rel" || { echo "make_fixtures.py no longer writes $rel as committed"; exit 1; }
done
echo "fixtures: make_fixtures.py reproduces the committed files"
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import torch' 2>/dev/null; then
    exec "$py" "$here/reference.py" --check
  fi
done
echo "skipped: no python3 with torch (Debian: apt install python3-torch) for reference.py"
exit 77
