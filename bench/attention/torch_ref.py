# SPDX-License-Identifier: Apache-2.0
# attention.lisp's attention in PyTorch eager: matmul, softmax, matmul (the plain form; with
# a causal mask for the causal rows). Prints  torch-NAME best-ms GFLOP/s  per line. With
# "backward" (backward.lisp's training step: forward, then backward of sum(out * dO)), up to
# TIME_MAX: torch-NAME best-ms.
# Usage: python3 torch_ref.py THREADS LENGTHS [backward TIME_MAX]
import sys
import time

import torch

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
lengths = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "1024,4096").split(",")]
torch.set_num_threads(threads)
torch.manual_seed(0)
heads, dim = 12, 64
backward = len(sys.argv) > 3 and sys.argv[3] == "backward"
time_max = int(sys.argv[4]) if len(sys.argv) > 4 else 1024


def best_ms(fn, reps):
    fn()
    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        dt = (time.perf_counter() - t0) * 1e3
        best = dt if best is None or dt < best else best
    return best


for l in lengths:
    q, k, v = (torch.randn(1, heads, l, dim) for _ in range(3))
    mask = torch.ones(l, l, dtype=torch.bool).tril()
    flops = 4.0 * heads * l * l * dim

    def plain():
        s = (q @ k.transpose(-1, -2)) / dim ** 0.5
        return torch.softmax(s, dim=-1) @ v

    def causal():
        s = (q @ k.transpose(-1, -2)) / dim ** 0.5
        s = s.masked_fill(~mask, float("-inf"))
        return torch.softmax(s, dim=-1) @ v

    if backward:
        if l > time_max:
            continue
        d_out = torch.randn(1, heads, l, dim)
        for name, fn in (("plain", plain), ("causal", causal)):

            def step():
                for x in (q, k, v):
                    x.grad = None
                fn().backward(d_out)

            for x in (q, k, v):
                x.requires_grad_(True)
            print(f"torch-{name}-{l} {best_ms(step, 2):.3f}")
        continue
    with torch.no_grad():
        for name, fn in (("plain", plain), ("causal", causal)):
            ms = best_ms(fn, 1 if l > 2048 else 3)
            print(f"torch-{name}-{l} {ms:.3f} {flops / ms / 1e6:.2f}")
