#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The heuristics against the beam search (issue 22: without BEAM, the heuristics' kernels must
# be within 20% of the searched ones). In one fresh kernel cache: bench/tensor/jit.lisp once
# with TENSORLISP_BEAM=WIDTH, which searches each kernel in its warm-up runs (at most BUDGET
# seconds per kernel; the search's lines go to a log file), then ROUNDS times each of the
# heuristics' run and the searched run in turns (the searched kernels come from the disk cache),
# each benchmark's best time of all its runs. Prints both times and the ratio heuristics / beam
# (above 1: the search found faster kernels). The runs alternate because a shared machine's
# speed drifts over minutes.
#   bench/tensor/beam.sh [TLISP] [WIDTH] [BUDGET] [ROUNDS]     defaults: build/tlisp 2 10 2
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tlisp="${1:-$here/../../build/tlisp}"
width="${2:-2}"
budget="${3:-10}"
rounds="${4:-2}"
threads="${TENSORLISP_THREADS:-1}"
cache=$(mktemp -d)
log=$(mktemp --suffix=.beam.log)
trap 'rm -rf "$cache"' EXIT
run() {  # run WIDTH: jit.lisp's lines with beam width WIDTH (0: the heuristics)
  TENSORLISP_THREADS=$threads TENSORLISP_CACHE_DIR=$cache TENSORLISP_BEAM=$1 TENSORLISP_BEAM_BUDGET=$budget \
    "$tlisp" --device cpu "$here/jit.lisp" 2>>"$log"
}
echo "== $threads thread(s) on $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), beam $width, $budget s per kernel"
start=$(date +%s)
run "$width" >/dev/null
echo "searched $(grep -c 'kernels timed in' "$log" || true) kernels in $(( $(date +%s) - start )) s (their lines: $log)"
plain="" beamed=""
for _ in $(seq "$rounds"); do
  plain+=$(run 0)$'\n'
  beamed+=$(run "$width")$'\n'
done
best() { awk -v n="$2" '$1 == n && (b == "" || $2 < b) {b = $2} END {print b}' <<<"$1"; }
printf '%-26s %12s %12s %8s\n' benchmark heuristics beam ratio
for name in $(awk 'NF {print $1}' <<<"$plain" | awk '!seen[$0]++'); do
  p=$(best "$plain" "$name") b=$(best "$beamed" "$name")
  [ -n "$p" ] && [ -n "$b" ] || continue
  printf '%-26s %9.3f ms %9.3f ms %7.2fx\n' "$name" "$p" "$b" "$(echo "$p / $b" | bc -l)"
done
