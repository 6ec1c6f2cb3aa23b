#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Seeds of the op fuzzer (tensor_fuzz_ops.lisp) that once found a bug, run again on the CPU:
#   507, 521  LLVM 14's vectorizers narrowed a float-to-int cast (fptosi + trunc to i8 or i16)
#             into an invalid float truncation, which aborted the process in instruction
#             selection (the emitter now freezes the conversion);
#   522       a bf16 product whose running value leaves f32's range: the reference executor
#             multiplied in double and disagreed with the JIT's (and PyTorch's) f32 accumulator;
#   572       a max of +0 and -0 gave its second operand, and the rewrites took max as
#             commutative and swapped its operands (recip of that zero flipped a comparison);
#             max is IEEE's maximum now (+0 in either order);
#   2072      an f16 scatter-add whose values came through a permuted view: LLVM 14
#             miscompiled the vectorized strided f16 loads (the emitter freezes them now);
# and on the simulated GPU (sim=nvptx):
#   1170      an f16 max reduce over signed zeros, combined in a GPU group's order, gave -0
#             where the reference's order gave +0 (IEEE's maximum fixed it);
#   1171      a bf16 product of three terms overflowed in the GPU's order and not in the
#             reference's: the fuzzer accepts a sum or product computed in any order of its
#             terms (fz-order-explains-p).
# Usage: fuzz_ops_seeds.sh TLISP
set -euo pipefail
tlisp="$1"
cd "$(dirname "$0")"
status=0
for run in 507: 521: 522: 572: 2072: 1170:sim=nvptx 1171:sim=nvptx; do
  seed=${run%%:*}
  options=${run#*:}
  out=$(TENSORLISP_THREADS=1 TENSORLISP_DEVICE_OPTIONS="$options" "$tlisp" tensor_fuzz_ops.lisp --graphs 1000 --grad-graphs 0 --quantized-graphs 0 --seed "$seed" 2>&1) || true
  if grep -q "value graphs: 1000 of 1000 agree" <<<"$out"; then
    echo "seed $seed ${options:-cpu}: ok"
  else
    echo "seed $seed ${options:-cpu}: FAILED"
    tail -20 <<<"$out"
    status=1
  fi
done
exit $status
