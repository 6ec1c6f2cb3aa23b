# SPDX-License-Identifier: Apache-2.0
# The benchmarks of fft.lisp in NumPy (pocketfft; it computes in double precision) and
# PyTorch: lines "LIB-NAME best-ms".
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
z = (rng.standard_normal(1 << 20) + 1j * rng.standard_normal(1 << 20)).astype(np.complex64)
z128 = z.astype(np.complex128)
r = rng.standard_normal((1024, 4096)).astype(np.float32)
p = (rng.standard_normal((256, 1031)) + 1j * rng.standard_normal((256, 1031))).astype(np.complex64)
img = rng.standard_normal((16, 256, 256)).astype(np.float32)
sig = rng.standard_normal((8, 160000)).astype(np.float32)
rh = np.fft.rfft(r)

cases = {
    "fft-c64-1048576": (lambda m: lambda: m.fft(z), z),
    "fft-c128-1048576": (lambda m: lambda: m.fft(z128), z128),
    "ifft-c64-1048576": (lambda m: lambda: m.ifft(z), z),
    "rfft-f32-1024x4096": (lambda m: lambda: m.rfft(r), r),
    "irfft-f32-1024x4096": (lambda m: lambda: m.irfft(m.rfft(r)), r),
    "fft-c64-256x1031": (lambda m: lambda: m.fft(p), p),
    "rfft2-f32-16x256x256": (lambda m: lambda: m.fft2(img), img),
}
for name, (make, _) in cases.items():
    print(f"numpy-{name} {best_ms(make(np.fft), 5):.3f}", flush=True)
if torch is not None:
    tz, tz128, tr, tp, timg, tsig = (torch.from_numpy(a) for a in (z, z128, r, p, img, sig))
    tcases = {
        "fft-c64-1048576": lambda: torch.fft.fft(tz),
        "fft-c128-1048576": lambda: torch.fft.fft(tz128),
        "ifft-c64-1048576": lambda: torch.fft.ifft(tz),
        "rfft-f32-1024x4096": lambda: torch.fft.rfft(tr),
        "irfft-f32-1024x4096": lambda: torch.fft.irfft(torch.fft.rfft(tr)),
        "fft-c64-256x1031": lambda: torch.fft.fft(tp),
        "rfft2-f32-16x256x256": lambda: torch.fft.fft2(timg),
        "stft-f32-8x160000": lambda: torch.stft(tsig, 512, hop_length=128, window=torch.hann_window(512),
                                                return_complex=True),
    }
    for name, f in tcases.items():
        print(f"torch-{name} {best_ms(f, 5):.3f}", flush=True)
