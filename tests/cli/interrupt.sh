#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs interrupt_realize.lisp, sends SIGINT once it has started its realize, and checks that
# the realize stopped with an interrupt the script caught, and that the process lived on.
set -u
tlisp="$1"
out="$(mktemp)"
"$tlisp" "$(dirname "$0")/interrupt_realize.lisp" > "$out" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q ready "$out" && break; sleep 0.1; done
sleep 1
kill -INT "$pid"
start=$(date +%s)
wait "$pid"
rc=$?
cat "$out"
rm -f "$out"
echo "exit status $rc after $(( $(date +%s) - start )) s"
