#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Gabriel benchmark set in TensorLisp, CPython, Lua 5.4 and Guile 3.0 (issue 25).
#
# Usage: bench/lisp/run.sh [TLISP] [RUNS]      (defaults: build/tlisp, 5)
# Environment: PYTHON (default /usr/bin/python3, else python3), LUA (lua5.4, else lua),
#              GUILE (guile): set one to a missing command to leave that language out;
#              BENCHMARKS: a space-separated subset of the benchmarks to run.
#
# Each program runs its benchmark and prints one answer line; every interpreter must print
# the same line (a difference is reported as MISMATCH and the script exits with status 1).
# Each interpreter runs each program once untimed (warm-up), then RUNS times; a run's time is
# the user+sys CPU time of the whole process (start-up included), measured with bash's
# `times` builtin in a subshell, so nothing beyond bash is needed. The table shows the
# median of the RUNS times, and the ratio python/tlisp (CPython's time over TensorLisp's:
# above 1 means TensorLisp is faster), likewise lua/tlisp and guile/tlisp. The last row is
# the geometric mean over the benchmarks. An interpreter that is not installed shows "-" and
# is left out of the means.
#
# Guile runs as its users run it: `guile FILE.scm`, with auto-compilation on. The untimed
# warm-up run compiles the file into Guile's cache (~/.cache/guile/ccache), so the timed
# runs load the cached bytecode and measure no compilation.
set -uo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
tlisp="${1:-$root/build/tlisp}"
runs="${2:-5}"
benchmarks=(${BENCHMARKS:-tak fib takl deriv destructive div-iter div-rec nqueens puzzle triangle strbuild})

if [ ! -x "$tlisp" ]; then
  echo "run.sh: $tlisp is not an executable (build TensorLisp first, or pass its path)" >&2
  exit 2
fi
if ! [[ "$runs" =~ ^[1-9][0-9]*$ ]]; then
  echo "run.sh: RUNS must be a positive integer, not '$runs'" >&2
  exit 2
fi

# --- the interpreters -------------------------------------------------------------------
find_cmd() {  # the first of the arguments that can be run, or nothing
  local c
  for c in "$@"; do
    if [ -n "$c" ] && command -v "$c" >/dev/null 2>&1; then
      command -v "$c"
      return
    fi
  done
}
pick() {  # pick VAR DEFAULT...: the command that $VAR names if set (even if missing), else the
  # first DEFAULT that exists
  local var="$1"
  shift
  if [ -n "${!var+set}" ]; then find_cmd "${!var}"; else find_cmd "$@"; fi
}
python="$(pick PYTHON /usr/bin/python3 python3)"
# Resolve launcher shims (pyenv) to the interpreter itself, so its start-up is not inflated.
[ -n "$python" ] && python="$("$python" -c 'import sys; print(sys.executable)' 2>/dev/null || echo "$python")"
lua="$(pick LUA lua5.4 lua)"
if [ -n "$lua" ] && ! "$lua" -v 2>&1 | grep -q 'Lua 5\.4'; then
  echo "note: $lua is not Lua 5.4 ($("$lua" -v 2>&1 | head -n 1)); timing it anyway" >&2
fi
guile="$(pick GUILE guile guile3.0)"

langs=(tlisp python lua guile)
declare -A cmd=([tlisp]="$tlisp" [python]="$python" [lua]="$lua" [guile]="$guile")
declare -A ext=([tlisp]=lisp [python]=py [lua]=lua [guile]=scm)

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# --- measuring --------------------------------------------------------------------------
# cpu_seconds OUT ERR CMD...: run CMD with stdout to OUT and stderr to ERR; print the user+sys
# CPU seconds of the process (bash's `times` in a subshell reports only its children),
# followed by CMD's exit status.
cpu_seconds() {
  local out="$1" err="$2"
  shift 2
  # `times` must run in the subshell itself (not in a pipeline or $(...), which fork a new
  # process whose children's times start at zero). Its second line is the children's
  # "XmY.YYYs XmY.YYYs" (user, sys).
  (
    "$@" >"$out" 2>"$err"
    rc=$?
    times
    echo "$rc"
  ) | awk 'NR == 2 { split($1, u, /[ms]/); split($2, s, /[ms]/);
                     t = u[1] * 60 + u[2] + s[1] * 60 + s[2] }
           NR == 3 { printf "%.3f %d\n", t, $1 }'
}

median() {  # the median of the arguments
  printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
    END { if (NR % 2) printf "%.3f", v[(NR + 1) / 2];
          else printf "%.3f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# --- the header -------------------------------------------------------------------------
cpu="$(grep -m 1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/.*: *//')"
echo "machine: ${cpu:-unknown CPU}, $(nproc 2>/dev/null || echo '?') cores, $(uname -sr)"
version() {  # one line naming the interpreter of language $1
  local c="${cmd[$1]}"
  if [ -z "$c" ]; then echo "not installed"; return; fi
  case "$1" in
    tlisp) echo "$("$c" --version 2>&1 | head -n 1) ($c)" ;;
    python) echo "$("$c" -VV 2>&1 | head -n 1) ($c)" ;;
    lua) echo "$("$c" -v 2>&1 | head -n 1 | sed 's/ *Copyright.*//') ($c)" ;;
    guile) echo "$("$c" --version 2>&1 | head -n 1) ($c; auto-compiled, warm cache)" ;;
  esac
}
for l in "${langs[@]}"; do printf '%-7s %s\n' "$l:" "$(version "$l")"; done
echo "runs: $runs per interpreter and benchmark (after one untimed warm-up); CPU time"
echo "(user+sys) of the whole process, median"
echo

# --- the table --------------------------------------------------------------------------
fmt='%-12s %8s %8s %8s %8s %9s %9s %9s  %s\n'
printf "$fmt" benchmark tlisp_s python_s lua_s guile_s py/tlisp lua/tlisp gui/tlisp ""
declare -A logsum count
for key in tlisp python lua guile rpython rlua rguile; do logsum[$key]=0; count[$key]=0; done
failures=()

for name in "${benchmarks[@]}"; do
  declare -A med=() answer=()
  note=""
  for l in "${langs[@]}"; do
    c="${cmd[$l]}"
    file="$here/$name.${ext[$l]}"
    if [ -z "$c" ] || [ ! -f "$file" ]; then med[$l]="-"; continue; fi
    args=("$c" "$file")
    # Warm-up, untimed (for Guile it also fills the compiled-file cache).
    "${args[@]}" >"$tmp/out" 2>"$tmp/err"
    times_=()
    ok=1
    for ((r = 0; r < runs; r++)); do
      read -r t rc < <(cpu_seconds "$tmp/out" "$tmp/err" "${args[@]}")
      line="$(head -n 1 "$tmp/out")"
      if [ "$rc" != 0 ] || [ -z "$line" ]; then
        ok=0
        failures+=("$name/$l: exit status $rc: $(head -c 300 "$tmp/err" | tr '\n' ' ')")
        break
      fi
      if [ -n "${answer[$l]+set}" ] && [ "${answer[$l]}" != "$line" ]; then
        failures+=("$name/$l: the answer changed between runs")
      fi
      answer[$l]="$line"
      times_+=("$t")
    done
    if [ "$ok" = 1 ]; then med[$l]="$(median "${times_[@]}")"; else med[$l]="FAIL"; fi
  done
  # Every interpreter that ran must have printed the same answer line.
  ref=""
  for l in "${langs[@]}"; do
    [ -n "${answer[$l]+set}" ] || continue
    if [ -z "$ref" ]; then ref="${answer[$l]}"; reflang=$l
    elif [ "${answer[$l]}" != "$ref" ]; then
      note="MISMATCH"
      failures+=("$name: MISMATCH: $reflang printed '$ref' but $l printed '${answer[$l]}'")
    fi
  done
  ratio() {  # ratio of language $1's median to tlisp's, or -
    local a="${med[$1]}" b="${med[tlisp]}"
    if [[ "$a" =~ ^[0-9.]+$ && "$b" =~ ^[0-9.]+$ ]] && awk "BEGIN{exit !($a > 0 && $b > 0)}"; then
      awk "BEGIN{printf \"%.2f\", $a / $b}"
    else
      echo "-"
    fi
  }
  rp="$(ratio python)"; rl="$(ratio lua)"; rg="$(ratio guile)"
  printf "$fmt" "$name" "${med[tlisp]}" "${med[python]}" "${med[lua]}" "${med[guile]}" \
    "$rp" "$rl" "$rg" "$note"
  for key in tlisp python lua guile; do
    v="${med[$key]}"
    if [[ "$v" =~ ^[0-9.]+$ ]] && awk "BEGIN{exit !($v > 0)}"; then
      logsum[$key]="$(awk "BEGIN{printf \"%.12f\", ${logsum[$key]} + log($v)}")"
      count[$key]=$((count[$key] + 1))
    fi
  done
  for pair in "rpython $rp" "rlua $rl" "rguile $rg"; do
    set -- $pair
    if [ "$2" != "-" ]; then
      logsum[$1]="$(awk "BEGIN{printf \"%.12f\", ${logsum[$1]} + log($2)}")"
      count[$1]=$((count[$1] + 1))
    fi
  done
  unset med answer
done

geo() {  # geometric mean for a key of logsum, or -
  local key="$1" digits="$2"
  if [ "${count[$key]}" -gt 0 ]; then
    awk "BEGIN{printf \"%.${digits}f\", exp(${logsum[$key]} / ${count[$key]})}"
  else
    echo "-"
  fi
}
printf "$fmt" "geomean" "$(geo tlisp 3)" "$(geo python 3)" "$(geo lua 3)" "$(geo guile 3)" \
  "$(geo rpython 2)" "$(geo rlua 2)" "$(geo rguile 2)" ""
echo
echo "py/tlisp = CPython's time / TensorLisp's time: above 1 means TensorLisp is faster"
echo "(likewise lua/tlisp and gui/tlisp). The geometric means of the time columns and the"
echo "ratios are taken over the benchmarks that column has; the time column means are"
echo "comparable only when every interpreter ran every benchmark."
for l in python lua guile; do
  [ -n "${cmd[$l]}" ] || echo "note: $l is not installed: its columns show '-' and it is left out of the means."
done
if [ "${#failures[@]}" -gt 0 ]; then
  echo
  echo "!!! PROBLEMS:"
  printf '!!!   %s\n' "${failures[@]}"
  exit 1
fi
