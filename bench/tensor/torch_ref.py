# SPDX-License-Identifier: Apache-2.0
# The tensor benchmarks of jit.lisp in PyTorch (eager) and NumPy, printed in the same format:
#   NAME  best-ms  GFLOP/s  GB/s   (lines prefixed with torch- or numpy-)
# Usage: python3 torch_ref.py THREADS
import sys
import time

threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1


def best_ms(fn, reps):
    fn()
    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        dt = (time.perf_counter() - t0) * 1e3
        best = dt if best is None or dt < best else best
    return best


def report(prefix, name, ms, flops, nbytes):
    print(f"{prefix}-{name} {ms:.3f} {flops / ms / 1e6:.2f} {nbytes / ms / 1e6:.2f}")


def run(prefix, lib, randn, matmul, relu, maximum, softmax, layernorm, exp, sigmoid, rowmax):
    w1, b1, w2, b2, x1 = randn(784, 256), randn(256), randn(256, 10), randn(10), randn(1, 784)
    mlp_flops, mlp_bytes = 2.0 * (784 * 256 + 256 * 10), 4.0 * (784 * 256 + 256 * 10)
    ms = best_ms(lambda: matmul(relu(matmul(x1, w1) + b1), w2) + b2, 300)
    # Eager libraries have one way to call it: both of ours are compared with it.
    report(prefix, "mlp-1x784-eager", ms, mlp_flops, mlp_bytes)
    report(prefix, "mlp-1x784-jit", ms, mlp_flops, mlp_bytes)
    for n in (256, 512, 1024, 2048):
        a, b = randn(n, n), randn(n, n)
        report(prefix, f"matmul-{n}", best_ms(lambda: matmul(a, b), 2 if n > 1024 else 5), 2.0 * n**3, 12.0 * n * n)
    for m, k, n in ((48, 768, 50257), (48, 768, 50304), (2048, 128, 86)):
        a, b = randn(m, k), randn(k, n)
        report(prefix, f"matmul-{m}x{k}x{n}", best_ms(lambda: matmul(a, b), 3), 2.0 * m * k * n,
               4.0 * (m * k + k * n + m * n))
    w = randn(50257, 768)
    for m in (1, 48):
        x = randn(m, 768)
        report(prefix, f"lm-head-{m}x768@wT", best_ms(lambda: matmul(x, w.T), 5), 2.0 * m * 768 * 50257,
               4.0 * (m * 768 + 768 * 50257 + m * 50257))
    n = 2**24
    a, b, c = randn(n), randn(n), randn(n)
    report(prefix, "add-2^24", best_ms(lambda: a + b, 5), n, 12.0 * n)
    report(prefix, "relu(a*b+c)-2^24", best_ms(lambda: relu(a * b + c), 5), 3.0 * n, 16.0 * n)
    report(prefix, "6-op-chain-2^24", best_ms(lambda: ((a - b) * c + 1.5) * maximum(a, 0.0), 5), 6.0 * n, 16.0 * n)
    report(prefix, "exp-2^24", best_ms(lambda: exp(a), 5), n, 8.0 * n)
    report(prefix, "sigmoid-2^24", best_ms(lambda: sigmoid(a), 5), n, 8.0 * n)
    angles = a * 300.0
    report(prefix, "sin-2^24", best_ms(lambda: lib.sin(angles), 5), n, 8.0 * n)
    report(prefix, "cos-2^24", best_ms(lambda: lib.cos(angles), 5), n, 8.0 * n)
    report(prefix, "randn-2^24", best_ms(lambda: randn(n), 5), n, 4.0 * n)
    x = randn(4096, 4096)
    report(prefix, "softmax-4096x4096", best_ms(lambda: softmax(x), 5), 5.0 * 4096 * 4096, 8.0 * 4096 * 4096)
    report(prefix, "rowmax-4096x4096", best_ms(lambda: rowmax(x), 5), 4096.0 * 4096, 4.0 * 4096 * 4096)
    x = randn(4096, 1024)
    report(prefix, "layernorm-4096x1024", best_ms(lambda: layernorm(x), 5), 7.0 * 4096 * 1024, 8.0 * 4096 * 1024)
    cache, row, at = randn(4096, 1024) * 0, randn(1024), [0]

    def write_row():
        at[0] = (at[0] + 1) % 4096
        cache[at[0]] = row

    report(prefix, "kv-row-write-4096x1024", best_ms(write_row, 50), 0, 8.0 * 1024)


try:
    import torch

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    run("torch", torch, lambda *s: torch.randn(*s), torch.matmul, torch.relu,
        lambda x, v: torch.clamp(x, min=v), lambda x: torch.softmax(x, dim=-1),
        lambda x: torch.nn.functional.layer_norm(x, (x.shape[-1],)), torch.exp, torch.sigmoid,
        lambda x: x.amax(dim=-1))
    # bf16 (PyTorch's own kernels: oneDNN, with AMX where the CPU has it)
    a, b = torch.randn(1024, 1024).bfloat16(), torch.randn(1024, 1024).bfloat16()
    report("torch", "matmul-bf16-1024", best_ms(lambda: a @ b, 3), 2.0 * 1024**3, 6.0 * 1024 * 1024)
    x, w = torch.randn(1, 768).bfloat16(), torch.randn(768, 3072).bfloat16()
    report("torch", "matvec-bf16-1x768x3072", best_ms(lambda: x @ w, 20), 2.0 * 768 * 3072,
           2.0 * (768 + 768 * 3072 + 3072))
except ImportError:
    pass

try:
    import numpy as np

    rng = np.random.default_rng(0)

    def np_softmax(x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def np_layernorm(x):
        d = x - x.mean(axis=-1, keepdims=True)
        return d / np.sqrt((d * d).mean(axis=-1, keepdims=True) + 1e-5)

    run("numpy", np, lambda *s: rng.standard_normal(s, dtype=np.float32), np.matmul,
        lambda x: np.maximum(x, 0), np.maximum, np_softmax, np_layernorm, np.exp,
        lambda x: 1 / (1 + np.exp(-x)), lambda x: x.max(axis=-1))
except ImportError:
    pass
