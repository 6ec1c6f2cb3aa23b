#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Seeds of the op fuzzer (tensor_fuzz_ops.lisp) that once found a bug, run again on the CPU:
#   507, 521  LLVM 14's vectorizers narrowed a float-to-int cast (fptosi + trunc to i8 or i16)
#             into an invalid float truncation, which aborted the process in instruction
#             selection (the emitter now freezes the conversion);
#   522       a bf16 product whose running value leaves f32's range: the reference executor
#             multiplied in double and disagreed with the JIT's (and PyTorch's) f32 accumulator;
#   572       max(+0, -0) gives the second operand, but the rewrites took max as commutative
#             and swapped its operands (recip of that zero flipped a comparison).
# Usage: fuzz_ops_seeds.sh TLISP
set -euo pipefail
tlisp="$1"
cd "$(dirname "$0")"
status=0
for seed in 507 521 522 572; do
  out=$(TENSORLISP_THREADS=1 "$tlisp" tensor_fuzz_ops.lisp --graphs 1000 --grad-graphs 0 --seed "$seed" 2>&1) || true
  if grep -q "value graphs: 1000 of 1000 agree" <<<"$out"; then
    echo "seed $seed: ok"
  else
    echo "seed $seed: FAILED"
    tail -20 <<<"$out"
    status=1
  fi
done
exit $status
