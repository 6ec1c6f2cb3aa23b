#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# tlisp -e prints a value's whole printed form, bytes after a NUL included (it stopped at the
# NUL), test-backend / doc print their usage when called without arguments, and
# *error-output* writes to standard error (standard output stays as it was).
set -u
tlisp="$1"
out=$("$tlisp" -e '(coerce (list #\a (code-char 0) #\b) (quote string))' | od -An -c | tr -s ' ')
[ "$out" = ' " a \0 b " \n' ] && echo "nul: ok" || echo "nul: printed [$out]"
"$tlisp" test-backend >/dev/null; [ $? -eq 2 ] && echo "test-backend usage: ok" || echo "test-backend usage: wrong exit"
"$tlisp" doc | grep -q "usage: tlisp doc DIR" && echo "doc usage: ok" || echo "doc usage: missing"
err=$("$tlisp" -e '(progn (princ "out") (format *error-output* "to-stderr~%") (princ "more") nil)' 2>&1 >/dev/null)
outs=$("$tlisp" -e '(progn (princ "out") (format *error-output* "to-stderr~%") (princ "more") nil)' 2>/dev/null)
[ "$err" = "to-stderr" ] && [ "$outs" = "outmorenil" ] && echo "error-output: ok" || echo "error-output: stderr [$err], stdout [$outs]"
