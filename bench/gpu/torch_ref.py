# SPDX-License-Identifier: Apache-2.0
"""The GPU benchmarks of bench/gpu/gpu.lisp in PyTorch on the same GPU, timed with CUDA
events (best of several runs after a warm-up). Prints `torch-NAME ms GFLOP/s GB/s` per line,
or nothing when this PyTorch has no CUDA (Debian's python3-torch is CPU-only)."""
import sys

import torch


def best_ms(fn, reps):
    fn()
    torch.cuda.synchronize()
    best = None
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        ms = start.elapsed_time(end)
        best = ms if best is None else min(best, ms)
    return best


def bench(name, fn, flops=0.0, nbytes=0.0, reps=10):
    ms = best_ms(fn, reps)
    print(f"torch-{name} {ms:.4f} {flops / ms / 1e6:.2f} {nbytes / ms / 1e6:.2f}")


def main():
    if not torch.cuda.is_available():
        return 0
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32, as TensorLisp computes it
    torch.manual_seed(0)
    n = 2**26
    a, b, c = (torch.randn(n, device=dev) for _ in range(3))
    bench("add-2^26", lambda: a + b, n, 12.0 * n)
    bench("6-op-chain-2^26", lambda: ((a - b) * c + 1.5) * torch.clamp(a, min=0.0), 6.0 * n, 16.0 * n)
    x = torch.randn(4096, 4096, device=dev)
    bench("softmax-4096x4096", lambda: torch.softmax(x, dim=1), 5.0 * 4096 * 4096, 8.0 * 4096 * 4096)
    bench("row-sum-4096x4096", lambda: x.sum(dim=1), 4096.0 * 4096, 4.0 * 4096 * 4096)
    bench("col-sum-4096x4096", lambda: x.sum(dim=0), 4096.0 * 4096, 4.0 * 4096 * 4096)
    bench("sum-4096x4096", lambda: x.sum(), 4096.0 * 4096, 4.0 * 4096 * 4096)
    y = torch.randn(4096, 4096, device=dev)
    bench("matmul-4096", lambda: x @ y, 2.0 * 4096**3, 12.0 * 4096 * 4096, reps=3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
