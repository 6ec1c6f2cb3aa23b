#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# What a call into TensorLisp costs from Python, beside what a call into PyTorch costs on the
# same machine in the same run (issue 26).
#   PYTHONPATH=build/python /usr/bin/python3 bench/python/calls.py
# Rows: a Lisp function returning its argument (an int; a 128x784 f32 array in, the tensor
# out), and relu of that array read back as NumPy (TensorLisp) against torch.relu on the same
# array from torch.from_numpy, read back with .numpy(). Ratio = PyTorch's time / ours.
import time

import numpy as np

import tensorlisp


def per_call_us(f, n):
    for _ in range(min(n, 200)):
        f()
    best = float("inf")
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n * 1e6)
    return best


def main():
    x = np.random.default_rng(0).standard_normal((128, 784)).astype(np.float32)
    tl = tensorlisp.Interpreter()
    tl.eval("(defun id (x) x)")
    ident = tl.fn.id
    relu = tl.fn.relu
    rows = [
        ("call, int argument", per_call_us(lambda: ident(1), 20000), None),
        ("call, 128x784 array in, tensor out", per_call_us(lambda: ident(x), 5000), None),
    ]
    try:
        import torch
        torch.set_num_threads(1)
        tx = torch.from_numpy(x)
        theirs = per_call_us(lambda: torch.relu(tx).numpy(), 5000)
    except ImportError:
        theirs = None
    rows.append(("relu of a 128x784 array, read back", per_call_us(lambda: relu(x).numpy(), 5000), theirs))
    jrelu = tl.eval("(jit (lambda (x) (relu x)))")  # captured: replays its kernel
    rows.append(("the same through (jit ...)", per_call_us(lambda: jrelu(x).numpy(), 5000), theirs))
    print("%-40s %12s %12s %7s" % ("", "tensorlisp us", "torch us", "ratio"))
    for name, ours, torch_us in rows:
        print("%-40s %12.2f %12s %7s" % (name, ours, "-" if torch_us is None else "%.2f" % torch_us,
                                         "-" if torch_us is None else "%.2f" % (torch_us / ours)))


main()
