#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tlisp --profile=FILE (and TENSORLISP_PROFILE): the run's summary on standard error, a Chrome
# trace that parses as JSON with kernel events, the script's own output untouched; also after
# an error in the script; a missing file name is a usage error.
set -euo pipefail
tlisp="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
cat > "$dir/run.lisp" <<'LISP'
(defvar x (realize (randn '(16 32))))
(print (to-list (sum (softmax x :axis 1))))
LISP
"$tlisp" --profile="$dir/a.json" "$dir/run.lisp" > "$dir/out" 2> "$dir/err"
grep -q "16.0" "$dir/out" || { echo "script output lost:"; cat "$dir/out"; exit 1; }
grep -q "kernels running" "$dir/err" || { echo "no summary on stderr:"; cat "$dir/err"; exit 1; }
grep -q "trace written to $dir/a.json" "$dir/err" || { echo "no trace note:"; cat "$dir/err"; exit 1; }
"$tlisp" -e "(let ((e (gethash \"traceEvents\" (json-read-file \"$dir/a.json\"))))
              (count-if (lambda (x) (equal (gethash \"cat\" x) \"kernel\")) e))" > "$dir/n"
[ "$(cat "$dir/n")" -ge 2 ] || { echo "trace has $(cat "$dir/n") kernel events"; exit 1; }
echo "flag: ok"
# The environment variable, and a script that fails: the profile is still written.
echo '(realize (add x 1.0)) (car 5)' >> "$dir/run.lisp"
set +e
TENSORLISP_PROFILE="$dir/b.json" "$tlisp" "$dir/run.lisp" > /dev/null 2> "$dir/err"
rc=$?
set -e
[ "$rc" -eq 1 ] || { echo "failing script exited $rc"; exit 1; }
grep -q "car: argument 1 must be a list" "$dir/err" || { echo "error not reported:"; cat "$dir/err"; exit 1; }
[ -s "$dir/b.json" ] || { echo "no trace after an error"; cat "$dir/err"; exit 1; }
echo "environment and error: ok"
# A script that profiles a part itself (with-profile) inside the run's profile: both summaries,
# and the run's trace holds everything.
cat > "$dir/inner.lisp" <<'LISP'
(defvar x (realize (randn '(8 8))))
(realize (exp x))
(with-profile (:print nil) (realize (sin x)))
(realize (sqrt (abs x)))
LISP
"$tlisp" --profile="$dir/c.json" "$dir/inner.lisp" > /dev/null 2> "$dir/err"
grep -q "trace written to $dir/c.json" "$dir/err" || { echo "nested: no trace:"; cat "$dir/err"; exit 1; }
n=$("$tlisp" -e "(count-if (lambda (x) (equal (gethash \"cat\" x) \"realize\"))
                           (gethash \"traceEvents\" (json-read-file \"$dir/c.json\")))")
[ "$n" -ge 4 ] || { echo "nested: the trace has $n realizes"; exit 1; }
echo "nested: ok"
set +e
"$tlisp" --profile= -e 1 > /dev/null 2> "$dir/err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "needs the file" "$dir/err" || { echo "--profile= gave $rc:"; cat "$dir/err"; exit 1; }
echo "usage: ok"
