// SPDX-License-Identifier: Apache-2.0
// Fourier transforms on host memory through FFTW 3 (Debian's libfftw3-single3 and
// libfftw3-double3), loaded with dlopen when first used: nothing is linked at build time.
// These are the external kernels behind fft, ifft, rfft and irfft on the host devices: the CPU
// backend runs them as `extern` nodes and the reference executor calls them directly. On the
// GPUs an optimizer rule (stdlib/optimizers/70-fft.lisp) replaces them by generated kernels.
//
// Complex data is its parts: a real f32/f64 array whose last axis (of size 2) holds (real,
// imaginary), NumPy's layout. Every kernel transforms along the axis before the parts (or the
// last axis of real data), batched over the leading axes, unnormalized:
//   fft-c2c          Z (... N 2)        -> (... N 2)        X_k = sum_j z_j e^(-2 pi i jk/N)
//   fft-c2c-inverse  Z (... N 2)        -> (... N 2)        the same with e^(+2 pi i jk/N)
//   fft-r2c          X (... N)          -> (... N/2+1 2)    the first N/2 + 1 of fft-c2c's
//   fft-c2r-even     Z (... N/2+1 2)    -> (... N)          the real inverse of fft-r2c, N even
//   fft-c2r-odd      Z (... (N+1)/2 2)  -> (... N)          the same, N odd
// (the c2r kernels ignore the imaginary parts of the frequencies 0 and N/2).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tl::fftw {

// One source operand: its element type, shape and host data.
struct Operand {
  bool f64 = false;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
};

bool is_kernel(const std::string& name);
const std::vector<std::string>& kernel_names();

// Whether FFTW could be loaded (both precisions): "" when it was, else why not.
std::string available();

// The output's shape for kernel NAME on operands of SHAPES ("" into WHY when they do not fit).
std::vector<std::int64_t> output_shape(const std::string& name, const std::vector<std::vector<std::int64_t>>& shapes,
                                       std::string& why);

// Runs kernel NAME on SRC into OUT (of output_shape's shape and SRC's element type). Returns ""
// or the error.
std::string run(const std::string& name, void* out, const std::vector<Operand>& srcs);

}  // namespace tl::fftw
