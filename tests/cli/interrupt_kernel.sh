#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs interrupt_kernel.lisp, sends SIGINT a second after its long kernel was compiled (so it
# lands inside the kernel), and checks that the script caught the interrupt within 2 s of the
# signal (the kernel alone runs several seconds) and that the process lived on.
set -u
tlisp="$1"
out="$(mktemp)"
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
"$tlisp" "$(dirname "$0")/interrupt_kernel.lisp" > "$out" 2>&1 &
pid=$!
for _ in $(seq 1200); do grep -qE "tensorlisp: (compiled|loaded) " "$out" && break; sleep 0.05; done
sleep 1
kill -INT "$pid"
start=$(now_ms)
caught=""
for _ in $(seq 3000); do
  if grep -qE "^(caught|finished)" "$out"; then caught=$(now_ms); break; fi
  if ! kill -0 "$pid" 2>/dev/null; then break; fi
  sleep 0.01
done
wait "$pid"
rc=$?
grep -vE "^tensorlisp: " "$out"
rm -f "$out"
if [ -z "$caught" ]; then
  echo "not caught"
elif [ $(( caught - start )) -le 2000 ]; then
  echo "caught within 2 s of the signal ($(( caught - start )) ms)"
else
  echo "caught $(( caught - start )) ms after the signal (too late)"
fi
echo "exit status $rc"
