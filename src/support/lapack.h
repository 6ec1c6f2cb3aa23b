// SPDX-License-Identifier: Apache-2.0
// Dense linear algebra on host memory through LAPACK (OpenBLAS's, or the reference
// liblapack3), loaded with dlopen when first used: nothing is linked at build time. These are
// the external kernels behind the linalg module: the CPU backend runs them as `extern` nodes
// and the reference executor calls them directly, so both devices give LAPACK's results.
//
// Every kernel works on row-major matrices batched over leading axes, in f32 or f64, and
// writes one output; kernels with several results (qr, eigh, svd) pack them one after the
// other per batch element, and the Lisp side slices them apart. A failure (a singular matrix,
// one that is not positive definite, an algorithm that did not converge) is an error message
// naming the kernel and the batch element, never NaN written silently.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tl::lapack {

// One source operand: its element type, shape and host data.
struct Operand {
  bool f64 = false;
  std::vector<std::int64_t> shape;
  const void* data = nullptr;
};

// The kernels, with (per batch element, A being (M N) or (N N)):
//   linalg-solve     A (N N), B (N K)      -> X (N K), A X = B
//   linalg-inv       A (N N)               -> A^-1 (N N)
//   linalg-lu-det    A (N N)               -> (3): sign, log|det|, det (sign 0 and -inf when singular)
//   linalg-cholesky  A (N N), lower half   -> L (N N), A = L L^T
//   linalg-qr        A (M N)               -> Q (M K) then R (K N), K = min(M, N)
//   linalg-eigh      A (N N), lower half   -> eigenvalues (N) ascending, then eigenvectors (N N) as columns
//   linalg-svd       A (M N)               -> U (M K), S (K) descending, Vh (K N)
//   linalg-svd-full  A (M N)               -> U (M M), S (K), Vh (N N)
bool is_kernel(const std::string& name);
const std::vector<std::string>& kernel_names();

// The output's shape for kernel NAME on operands of SHAPES ("" into WHY when they do not fit).
std::vector<std::int64_t> output_shape(const std::string& name, const std::vector<std::vector<std::int64_t>>& shapes,
                                       std::string& why);

// Whether LAPACK could be loaded: "" when it was, else why not.
std::string available();

// Runs kernel NAME on SRCS into OUT (of output_shape's shape and the sources' element type).
// CANCELLED, when given, is asked between batch elements; true stops the run (the result is
// then incomplete and `stopped` is set). Returns "" or the error; INPUT_ERROR says whether the
// input caused it (a singular matrix: a value-error for the user) or the call was wrong.
std::string run(const std::string& name, void* out, const std::vector<Operand>& srcs,
                const std::function<bool()>& cancelled, bool& stopped, bool& input_error);

}  // namespace tl::lapack
