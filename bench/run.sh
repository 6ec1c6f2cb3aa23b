#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Interpreter benchmarks: times each bench/*.lisp (best of N runs) and, where python3 exists,
# the same program in CPython, with the ratio. Usage: bench/run.sh [TLISP] [RUNS]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tlisp="${1:-$here/../build/tlisp}"
runs="${2:-5}"
best() {  # best wall time in seconds of `runs` runs of a command
  local best=""
  for ((i = 0; i < runs; i++)); do
    local t0 t1 t
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    t=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || (($(echo "$t < $best" | bc -l))); then best=$t; fi
  done
  printf '%.3f' "$best"
}
python=$(command -v python3 || true)
# Resolve launcher shims (pyenv) to the interpreter itself, so its start-up is not inflated.
[ -n "$python" ] && python=$("$python" -c 'import sys; print(sys.executable)')
printf '%-10s %10s %10s %8s\n' benchmark tlisp_s python_s ratio
for f in "$here"/*.lisp; do
  name=$(basename "$f" .lisp)
  t=$(best "$tlisp" "$f")
  if [ -n "$python" ] && [ -f "$here/python/$name.py" ]; then
    p=$(best "$python" "$here/python/$name.py")
    r=$(echo "$p / $t" | bc -l)
    printf '%-10s %10s %10s %7.2fx\n' "$name" "$t" "$p" "$r"
  else
    printf '%-10s %10s %10s %8s\n' "$name" "$t" "-" "-"
  fi
done
echo "(ratio = python time / tlisp time; above 1 means tlisp is faster)"
