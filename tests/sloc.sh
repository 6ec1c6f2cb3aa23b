#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Counts code lines (no blank lines, no comment-only lines) per src/ folder. Report only.
root="$(cd "$(dirname "$0")/.." && pwd)"
total=0
printf '%-22s %8s\n' "folder" "lines"
for d in "$root"/src/*/ "$root"/lisp/; do
  n=$(find "$d" -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.lisp' \) -print0 |
      xargs -0 cat | grep -v '^\s*$' | grep -v '^\s*//' | grep -v '^\s*;' | wc -l)
  printf '%-22s %8d\n' "${d#$root/}" "$n"
  total=$((total + n))
done
printf '%-22s %8d\n' "total" "$total"
