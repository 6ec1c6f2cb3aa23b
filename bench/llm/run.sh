#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Language-model benchmarks (issue 21), TensorLisp next to PyTorch (Debian's python3-torch)
# in the same run, on 1 and 2 threads:
#  - a GPT-2 124M-shaped model (random weights, 12 layers, 768 wide, vocab 50257, f32, batch
#    1) in the Hugging Face layout, written to a temporary folder by make_gpt2.py: decode
#    ms/token with the KV cache through hf:generate (gpt2.lisp) against a plain PyTorch GPT-2
#    with a KV cache (torch_ref.py), prefill of PREFILL tokens (tokens/s), the first greedy ids
#    of both (they should agree), and each process's peak resident memory;
#  - the same model's weights cast to bf16 on load (hf:load :dtype; matmuls sum in f32): decode
#    ms/token, its ratio to f32's and whether the greedy ids agree;
#  - the same model's weights quantized on load (issue 27: q8_0 and q4_0, hf:load :quantize):
#    decode ms/token and its ratio to f32's (the target: q8_0 at most 0.6x, q4_0 at most 0.4x:
#    decode reads every weight once a token, so fewer bytes should take less time), and whether
#    the greedy ids agree with f32's; then quant_gemv.lisp, the matrix-vector products alone
#    against the memory bandwidth;
#  - training tokens/s of examples/char-gpt.lisp against the same model in PyTorch
#    (char_gpt_torch.py), CHAR_STEPS steps after warm-up.
#   bench/llm/run.sh [BUILD_DIR]      (PREFILL=512 DECODE=32 CHAR_STEPS=50 THREADS="1 2")
# Ratio: above 1 means TensorLisp is faster (PyTorch's time / ours, our rate / PyTorch's).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-$root/build}"
tlisp="$build/tlisp"
here="$root/bench/llm"
python=/usr/bin/python3
# shellcheck source=bench/openblas-core.sh
source "$(dirname "${BASH_SOURCE[0]}")/../openblas-core.sh"
openblas_core
prefill="${PREFILL:-512}"
decode="${DECODE:-32}"
char_steps="${CHAR_STEPS:-50}"
threads_list="${THREADS:-1 2}"
if ! "$python" -c "import torch, numpy" 2>/dev/null; then
  echo "bench/llm: $python has no torch or numpy (apt-get install python3-torch)" >&2
  exit 1
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

field() {  # field REGEX TEXT: the first capture of sed's REGEX in TEXT
  printf '%s\n' "$2" | sed -n "s/$1/\\1/p" | head -1
}
ratio() {  # ratio A B: A / B to two decimals
  awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2fx", a / b }'
}
row() {
  printf '%-30s %-8s %12s %12s %8s\n' "$@"
}

echo "writing a GPT-2 124M-shaped random checkpoint to $tmp/gpt2"
"$python" "$here/make_gpt2.py" "$tmp/gpt2"
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
row "" threads tlisp torch ratio
declare -A f32_dec f32_greedy
for threads in $threads_list; do
  ours=$(TENSORLISP_THREADS=$threads "$tlisp" "$here/gpt2.lisp" --model "$tmp/gpt2" --prefill "$prefill" \
           --decode "$decode" 2>&1)
  theirs=$("$python" "$here/torch_ref.py" "$tmp/gpt2" "$threads" "$prefill" 16 "$decode" 2>&1)
  o_dec=$(field '.*decode [0-9]* tokens: \([0-9.]*\) ms\/token.*' "$ours")
  t_dec=$(field '.*decode [0-9]* tokens: \([0-9.]*\) ms\/token.*' "$theirs")
  o_pre=$(field '.*prefill [0-9]* tokens: [0-9.]* s, \([0-9.]*\) tokens\/s.*' "$ours")
  t_pre=$(field '.*prefill [0-9]* tokens: [0-9.]* s, \([0-9.]*\) tokens\/s.*' "$theirs")
  o_rss=$(field '.*peak rss: \([0-9]*\) MiB.*' "$ours")
  t_rss=$(field '.*peak rss: \([0-9]*\) MiB.*' "$theirs")
  same=no
  [ -n "$(field '.*greedy: \(.*\)' "$ours")" ] &&
    [ "$(field '.*greedy: \(.*\)' "$ours")" = "$(field '.*greedy: \(.*\)' "$theirs")" ] && same=yes
  if [ -z "$o_dec" ] || [ -z "$t_dec" ]; then
    printf 'tlisp:\n%s\ntorch:\n%s\n' "$ours" "$theirs" >&2
  fi
  row "gpt2-124m decode ms/token" "$threads" "$o_dec" "$t_dec" "$(ratio "$t_dec" "$o_dec")"
  row "gpt2-124m prefill $prefill tokens/s" "$threads" "$o_pre" "$t_pre" "$(ratio "$o_pre" "$t_pre")"
  row "gpt2-124m peak RSS MiB" "$threads" "$o_rss" "$t_rss" "$(ratio "$t_rss" "$o_rss")"
  row "gpt2-124m greedy ids agree" "$threads" "$same" "" ""
  f32_dec[$threads]="$o_dec"
  f32_greedy[$threads]="$(field '.*greedy: \(.*\)' "$ours")"
done
row "" threads tlisp "vs f32" "ids agree"
for threads in $threads_list; do
  for fmt in bf16 q8_0 q4_0; do
    how=(--quantize "$fmt")
    [ "$fmt" = bf16 ] && how=(--dtype bf16)
    ours=$(TENSORLISP_THREADS=$threads "$tlisp" "$here/gpt2.lisp" --model "$tmp/gpt2" --prefill 16 \
             --decode "$decode" "${how[@]}" 2>&1)
    q_dec=$(field '.*decode [0-9]* tokens: \([0-9.]*\) ms\/token.*' "$ours")
    [ -n "$q_dec" ] || printf 'tlisp:\n%s\n' "$ours" >&2
    agree=no
    [ "$(field '.*greedy: \(.*\)' "$ours")" = "${f32_greedy[$threads]}" ] && agree=yes
    row "gpt2-124m $fmt decode ms/token" "$threads" "$q_dec" "$(ratio "$q_dec" "${f32_dec[$threads]}")" "$agree"
  done
done
for threads in $threads_list; do
  echo "== quantized matrix-vector products, $threads thread(s) (bench/llm/quant_gemv.lisp)"
  TENSORLISP_THREADS=$threads "$tlisp" "$here/quant_gemv.lisp"
done
for threads in $threads_list; do
  ours=$(TENSORLISP_THREADS=$threads "$tlisp" "$root/examples/char-gpt.lisp" --steps "$char_steps" \
           --eval-every 1000000 --eval-batches 1 --sample 0 --out "$tmp/char-gpt" 2>&1 | tr '\r' '\n')
  theirs=$("$python" "$here/char_gpt_torch.py" "$threads" "$char_steps" 2>&1)
  o_tok=$(field '.* \([0-9]*\) tokens\/s after the first step.*' "$ours")
  t_tok=$(field '.* \([0-9]*\) tokens\/s, loss.*' "$theirs")
  if [ -z "$o_tok" ] || [ -z "$t_tok" ]; then
    printf 'tlisp:\n%s\ntorch:\n%s\n' "$ours" "$theirs" >&2
  fi
  row "char-gpt train tokens/s" "$threads" "$o_tok" "$t_tok" "$(ratio "$o_tok" "$t_tok")"
done
