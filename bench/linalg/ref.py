# SPDX-License-Identifier: Apache-2.0
# The linalg benchmarks of linalg.lisp in NumPy and PyTorch: lines "LIB-NAME-DTYPE-N best-ms".
import sys
import time

import numpy as np


def best_ms(f, reps):
    f()
    best = None
    for _ in range(reps):
        t0 = time.perf_counter()
        f()
        dt = (time.perf_counter() - t0) * 1e3
        best = dt if best is None or dt < best else best
    return best


try:
    import torch
except ImportError:
    torch = None

rng = np.random.default_rng(0)
for dt in ("f64", "f32"):
    npdt = np.float64 if dt == "f64" else np.float32
    for n in (256, 1024):
        x = rng.standard_normal((n, n)).astype(npdt)
        spd = (x @ x.T + n * np.eye(n, dtype=npdt)).astype(npdt)
        b = rng.standard_normal((n, 1)).astype(npdt)
        reps = 3 if n > 512 else 10
        cases = {
            "solve": lambda m: (lambda: m.solve(x, b)),
            "inv": lambda m: (lambda: m.inv(x)),
            "det": lambda m: (lambda: m.det(x)),
            "cholesky": lambda m: (lambda: m.cholesky(spd)),
            "qr": lambda m: (lambda: m.qr(x)),
            "eigh": lambda m: (lambda: m.eigh(spd)),
            "svd": lambda m: (lambda: m.svd(x, full_matrices=False)),
        }
        for name, make in cases.items():
            print("numpy-%s-%s-%d %.3f" % (name, dt, n, best_ms(make(np.linalg), reps)))
            if torch is not None:
                tx, tspd, tb = torch.from_numpy(x), torch.from_numpy(spd), torch.from_numpy(b)
                tcases = {
                    "solve": lambda: torch.linalg.solve(tx, tb),
                    "inv": lambda: torch.linalg.inv(tx),
                    "det": lambda: torch.linalg.det(tx),
                    "cholesky": lambda: torch.linalg.cholesky(tspd),
                    "qr": lambda: torch.linalg.qr(tx),
                    "eigh": lambda: torch.linalg.eigh(tspd),
                    "svd": lambda: torch.linalg.svd(tx, full_matrices=False),
                }
                print("torch-%s-%s-%d %.3f" % (name, dt, n, best_ms(tcases[name], reps)))
        sys.stdout.flush()
