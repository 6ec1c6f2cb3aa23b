// SPDX-License-Identifier: Apache-2.0
#include "lapack.h"

#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <mutex>
#include <type_traits>

namespace tl::lapack {

namespace {

// LAPACK's Fortran entry points (LP64: 32-bit integers, as Debian's OpenBLAS and liblapack3
// have them); character arguments are followed by their hidden lengths.
template <class T>
struct Fns {
  void (*getrf)(const int* m, const int* n, T* a, const int* lda, int* ipiv, int* info) = nullptr;
  void (*getrs)(const char* trans, const int* n, const int* nrhs, const T* a, const int* lda, const int* ipiv, T* b,
                const int* ldb, int* info, std::size_t) = nullptr;
  void (*getri)(const int* n, T* a, const int* lda, const int* ipiv, T* work, const int* lwork, int* info) = nullptr;
  void (*potrf)(const char* uplo, const int* n, T* a, const int* lda, int* info, std::size_t) = nullptr;
  void (*geqrf)(const int* m, const int* n, T* a, const int* lda, T* tau, T* work, const int* lwork,
                int* info) = nullptr;
  void (*orgqr)(const int* m, const int* n, const int* k, T* a, const int* lda, const T* tau, T* work, const int* lwork,
                int* info) = nullptr;
  void (*syevd)(const char* jobz, const char* uplo, const int* n, T* a, const int* lda, T* w, T* work, const int* lwork,
                int* iwork, const int* liwork, int* info, std::size_t, std::size_t) = nullptr;
  void (*gesdd)(const char* jobz, const int* m, const int* n, T* a, const int* lda, T* s, T* u, const int* ldu, T* vt,
                const int* ldvt, T* work, const int* lwork, int* iwork, int* info, std::size_t) = nullptr;
};

struct Library {
  Fns<float> s;
  Fns<double> d;
  std::string error;  // why it could not be loaded
};

template <class F>
bool find(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  return f != nullptr;
}

const Library& library() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    // OpenBLAS starts its threads when it is loaded: they must take no signals (Ctrl-C goes
    // to the interpreter's thread).
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (const char* name : {"libopenblas.so.0", "liblapack.so.3"}) {
      void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) continue;
      bool ok = find(h, "sgetrf_", lib.s.getrf) && find(h, "sgetrs_", lib.s.getrs) && find(h, "sgetri_", lib.s.getri) &&
                find(h, "spotrf_", lib.s.potrf) && find(h, "sgeqrf_", lib.s.geqrf) && find(h, "sorgqr_", lib.s.orgqr) &&
                find(h, "ssyevd_", lib.s.syevd) && find(h, "sgesdd_", lib.s.gesdd) && find(h, "dgetrf_", lib.d.getrf) &&
                find(h, "dgetrs_", lib.d.getrs) && find(h, "dgetri_", lib.d.getri) && find(h, "dpotrf_", lib.d.potrf) &&
                find(h, "dgeqrf_", lib.d.geqrf) && find(h, "dorgqr_", lib.d.orgqr) && find(h, "dsyevd_", lib.d.syevd) &&
                find(h, "dgesdd_", lib.d.gesdd);
      if (ok) break;
      lib.s = {};
      lib.d = {};
      dlclose(h);
    }
    if (lib.s.getrf == nullptr) lib.error = "no LAPACK library found (install libopenblas0 or liblapack3)";
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  });
  return lib;
}

template <class T>
const Fns<T>& fns() {
  if constexpr (std::is_same_v<T, float>) return library().s;
  else return library().d;
}

// Marks an error the input caused (a singular matrix), which run() reports as such.
const std::string kInputError = "\x01";

const std::vector<std::string> kNames = {"linalg-solve", "linalg-inv",  "linalg-lu-det", "linalg-cholesky",
                                         "linalg-qr",    "linalg-eigh", "linalg-svd",    "linalg-svd-full"};

// The function a user called, for messages: linalg-lu-det is linalg:det.
std::string user_name(const std::string& kernel) {
  if (kernel == "linalg-lu-det") return "linalg:det";
  return "linalg:" + kernel.substr(7);
}

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? " " : "") + std::to_string(s[i]);
  return t + ")";
}

// A row-major R x C matrix as a column-major one (its transpose's memory), and back.
template <class T>
void to_columns(const T* row, std::int64_t r, std::int64_t c, T* col) {
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) col[j * r + i] = row[i * c + j];
}
template <class T>
void to_rows(const T* col, std::int64_t ld, std::int64_t r, std::int64_t c, T* row) {
  for (std::int64_t i = 0; i < r; ++i)
    for (std::int64_t j = 0; j < c; ++j) row[i * c + j] = col[j * ld + i];
}

// LAPACK's sizes are ints.
int as_int(std::int64_t v) { return static_cast<int>(v); }

// The work array a query (lwork = -1) asked for.
template <class T>
int work_size(T w) {
  return std::max(1, static_cast<int>(w) + 1);
}

// One kernel's run over the batch: the shapes it was given, in rows/columns.
struct Dims {
  std::int64_t batch = 1, m = 0, n = 0, k = 0;  // A (M N); for solve, B (N K)
};

template <class T>
std::string run_one(const std::string& name, const Dims& d, T* out, const std::vector<const T*>& srcs, std::int64_t b) {
  const Fns<T>& f = fns<T>();
  const std::string where = d.batch > 1 ? " (batch element " + std::to_string(b) + ")" : "";
  const std::int64_t m = d.m, n = d.n;
  int info = 0;
  if (name == "linalg-solve" || name == "linalg-inv" || name == "linalg-lu-det") {
    // The row-major A read as column-major is M = A^T: det(M) = det(A), M^-1 read back
    // row-major is A^-1, and A X = B is M^T X = B. No transposing copy of A.
    const int in = as_int(n), ld = std::max(1, in);
    std::vector<T> a(srcs[0] + b * n * n, srcs[0] + (b + 1) * n * n);
    std::vector<int> piv(static_cast<std::size_t>(std::max<std::int64_t>(n, 1)));
    if (n > 0) f.getrf(&in, &in, a.data(), &ld, piv.data(), &info);
    if (info < 0) return user_name(name) + ": LAPACK getrf rejected argument " + std::to_string(-info);
    if (name == "linalg-lu-det") {
      T* o = out + b * 3;
      if (info > 0) {
        o[0] = 0, o[1] = -std::numeric_limits<T>::infinity(), o[2] = 0;
        return {};
      }
      // det = (-1)^(row swaps) * prod U[i][i]; log|det| summed, so it neither overflows nor underflows.
      T sign = 1, logabs = 0, det = 1;
      for (std::int64_t i = 0; i < n; ++i) {
        const T u = a[static_cast<std::size_t>(i * n + i)];
        if (piv[static_cast<std::size_t>(i)] != i + 1) sign = -sign, det = -det;
        if (u < 0) sign = -sign;
        logabs += std::log(std::abs(u));
        det *= u;
      }
      o[0] = sign, o[1] = logabs, o[2] = det;
      return {};
    }
    if (info > 0) {
      return kInputError + user_name(name) + ": the matrix is singular (its LU factorization has a zero pivot)" + where;
    }
    if (name == "linalg-inv") {
      if (n == 0) return {};
      const int query = -1;
      T w = 0;
      f.getri(&in, a.data(), &ld, piv.data(), &w, &query, &info);
      int lwork = work_size(w);
      std::vector<T> work(static_cast<std::size_t>(lwork));
      f.getri(&in, a.data(), &ld, piv.data(), work.data(), &lwork, &info);
      if (info != 0) return user_name(name) + ": LAPACK getri failed (info " + std::to_string(info) + ")" + where;
      std::copy(a.begin(), a.end(), out + b * n * n);
      return {};
    }
    const std::int64_t k = d.k;
    std::vector<T> x(static_cast<std::size_t>(n * k));
    to_columns(srcs[1] + b * n * k, n, k, x.data());
    const int ik = as_int(k);
    if (n > 0 && k > 0) f.getrs("T", &in, &ik, a.data(), &ld, piv.data(), x.data(), &ld, &info, 1);
    if (info != 0) return user_name(name) + ": LAPACK getrs failed (info " + std::to_string(info) + ")" + where;
    to_rows(x.data(), n, n, k, out + b * n * k);
    return {};
  }
  if (name == "linalg-cholesky") {
    // The row-major A read as column-major is A^T, whose upper half is A's lower half.
    const int in = as_int(n), ld = std::max(1, in);
    std::vector<T> a(srcs[0] + b * n * n, srcs[0] + (b + 1) * n * n);
    if (n > 0) f.potrf("U", &in, a.data(), &ld, &info, 1);
    if (info < 0) return user_name(name) + ": LAPACK potrf rejected argument " + std::to_string(-info);
    if (info > 0) {
      return kInputError + user_name(name) + ": the matrix is not positive definite (its leading minor of order " +
             std::to_string(info) + " is not)" + where;
    }
    T* o = out + b * n * n;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < n; ++j) o[i * n + j] = j <= i ? a[static_cast<std::size_t>(i * n + j)] : T(0);
    return {};
  }
  if (name == "linalg-qr") {
    const std::int64_t k = std::min(m, n);
    T* q = out + b * (m * k + k * n);
    T* r = q + m * k;
    if (k == 0) return {};
    const int im = as_int(m), in = as_int(n), ik = as_int(k), ld = std::max(1, im), query = -1;
    std::vector<T> a(static_cast<std::size_t>(m * n)), tau(static_cast<std::size_t>(k));
    to_columns(srcs[0] + b * m * n, m, n, a.data());
    T w = 0;
    f.geqrf(&im, &in, a.data(), &ld, tau.data(), &w, &query, &info);
    int lwork = work_size(w);
    f.orgqr(&im, &ik, &ik, a.data(), &ld, tau.data(), &w, &query, &info);
    lwork = std::max(lwork, work_size(w));
    std::vector<T> work(static_cast<std::size_t>(lwork));
    f.geqrf(&im, &in, a.data(), &ld, tau.data(), work.data(), &lwork, &info);
    if (info != 0) return user_name(name) + ": LAPACK geqrf failed (info " + std::to_string(info) + ")" + where;
    for (std::int64_t i = 0; i < k; ++i)
      for (std::int64_t j = 0; j < n; ++j) r[i * n + j] = j >= i ? a[static_cast<std::size_t>(j * m + i)] : T(0);
    f.orgqr(&im, &ik, &ik, a.data(), &ld, tau.data(), work.data(), &lwork, &info);
    if (info != 0) return user_name(name) + ": LAPACK orgqr failed (info " + std::to_string(info) + ")" + where;
    to_rows(a.data(), m, m, k, q);
    return {};
  }
  if (name == "linalg-eigh") {
    T* values = out + b * (n + n * n);
    T* vectors = values + n;
    if (n == 0) return {};
    // As for cholesky: the upper half of the column-major reading is A's lower half.
    const int in = as_int(n), ld = std::max(1, in), query = -1;
    std::vector<T> a(srcs[0] + b * n * n, srcs[0] + (b + 1) * n * n);
    T w = 0;
    int iw = 0;
    f.syevd("V", "U", &in, a.data(), &ld, values, &w, &query, &iw, &query, &info, 1, 1);
    int lwork = work_size(w), liwork = std::max(1, iw);
    std::vector<T> work(static_cast<std::size_t>(lwork));
    std::vector<int> iwork(static_cast<std::size_t>(liwork));
    f.syevd("V", "U", &in, a.data(), &ld, values, work.data(), &lwork, iwork.data(), &liwork, &info, 1, 1);
    if (info < 0) return user_name(name) + ": LAPACK syevd rejected argument " + std::to_string(-info);
    if (info > 0) return kInputError + user_name(name) + ": the eigenvalue algorithm did not converge" + where;
    to_rows(a.data(), n, n, n, vectors);  // column j is eigenvector j
    return {};
  }
  // linalg-svd, linalg-svd-full
  const bool full = name == "linalg-svd-full";
  const std::int64_t k = std::min(m, n), ucols = full ? m : k, vrows = full ? n : k;
  T* u = out + b * (m * ucols + k + vrows * n);
  T* s = u + m * ucols;
  T* vh = s + k;
  if (k == 0) {  // an empty matrix: the full factors are identities
    for (std::int64_t i = 0; i < m * ucols; ++i) u[i] = i % (ucols + 1) == 0 ? T(1) : T(0);
    for (std::int64_t i = 0; i < vrows * n; ++i) vh[i] = i % (n + 1) == 0 ? T(1) : T(0);
    return {};
  }
  // The row-major A read as column-major is M = A^T (N x M). With M = Um S VTm, A = VTm^T S
  // Um^T: Um (N x ucols of M) read back row-major is VH, VTm (vrows of M x M) is U. LAPACK
  // writes them straight into the output, no transposing copy.
  const int im = as_int(m), in = as_int(n), ld = std::max(1, in), ldvt = std::max(1, as_int(ucols)), query = -1;
  std::vector<T> a(srcs[0] + b * m * n, srcs[0] + (b + 1) * m * n);
  std::vector<int> iwork(static_cast<std::size_t>(8 * k));
  const char* job = full ? "A" : "S";
  T w = 0;
  f.gesdd(job, &in, &im, a.data(), &ld, s, vh, &ld, u, &ldvt, &w, &query, iwork.data(), &info, 1);
  int lwork = work_size(w);
  std::vector<T> work(static_cast<std::size_t>(lwork));
  f.gesdd(job, &in, &im, a.data(), &ld, s, vh, &ld, u, &ldvt, work.data(), &lwork, iwork.data(), &info, 1);
  if (info < 0) return user_name(name) + ": LAPACK gesdd rejected argument " + std::to_string(-info);
  if (info > 0) return kInputError + user_name("linalg-svd") + ": the SVD algorithm did not converge" + where;
  return {};
}

template <class T>
std::string run_all(const std::string& name, const Dims& d, void* out, const std::vector<Operand>& srcs,
                    const std::function<bool()>& cancelled, bool& stopped) {
  std::vector<const T*> in;
  for (const Operand& s : srcs) in.push_back(static_cast<const T*>(s.data));
  for (std::int64_t b = 0; b < d.batch; ++b) {
    if (cancelled && cancelled()) {
      stopped = true;
      return {};
    }
    if (std::string why = run_one<T>(name, d, static_cast<T*>(out), in, b); !why.empty()) return why;
  }
  return {};
}

// The batch and matrix sizes of kernel NAME's sources, or "" into WHY.
bool dims_of(const std::string& name, const std::vector<std::vector<std::int64_t>>& shapes, Dims& d, std::string& why) {
  const std::size_t want = name == "linalg-solve" ? 2 : 1;
  if (!is_kernel(name)) {
    why = "no linear-algebra kernel named \"" + name + "\"";
    return false;
  }
  if (shapes.size() != want) {
    why = user_name(name) + " takes " + std::to_string(want) + " operand(s), got " + std::to_string(shapes.size());
    return false;
  }
  const auto& a = shapes[0];
  if (a.size() < 2) {
    why = user_name(name) + ": the matrix must have at least 2 axes, got shape " + shape_text(a);
    return false;
  }
  d.m = a[a.size() - 2];
  d.n = a[a.size() - 1];
  d.batch = 1;
  for (std::size_t i = 0; i + 2 < a.size(); ++i) d.batch *= a[i];
  const bool square = name != "linalg-qr" && name != "linalg-svd" && name != "linalg-svd-full";
  if (square && d.m != d.n) {
    why = user_name(name) + ": the matrix must be square, got shape " + shape_text(a);
    return false;
  }
  if (want == 2) {
    const auto& bs = shapes[1];
    bool ok = bs.size() == a.size() && bs[bs.size() - 2] == d.n;
    for (std::size_t i = 0; ok && i + 2 < a.size(); ++i) ok = bs[i] == a[i];
    if (!ok) {
      why = user_name(name) + ": A " + shape_text(a) + " and B " + shape_text(bs) +
            " do not fit (B must be (... N K) with A's batch axes and N rows)";
      return false;
    }
    d.k = bs.back();
  }
  const std::int64_t limit = std::numeric_limits<int>::max();
  if (d.m > limit || d.n > limit || d.k > limit || d.m * d.n > limit) {
    why = user_name(name) + ": the matrix " + shape_text(a) + " is too large for LAPACK's 32-bit sizes";
    return false;
  }
  return true;
}

}  // namespace

bool is_kernel(const std::string& name) { return std::find(kNames.begin(), kNames.end(), name) != kNames.end(); }

const std::vector<std::string>& kernel_names() { return kNames; }

std::string available() { return library().error; }

std::vector<std::int64_t> output_shape(const std::string& name, const std::vector<std::vector<std::int64_t>>& shapes,
                                       std::string& why) {
  Dims d;
  if (!dims_of(name, shapes, d, why)) return {};
  std::vector<std::int64_t> out(shapes[0].begin(), shapes[0].end() - 2);
  const std::int64_t m = d.m, n = d.n, k = std::min(m, n);
  if (name == "linalg-solve") {
    out.push_back(n);
    out.push_back(d.k);
  } else if (name == "linalg-inv" || name == "linalg-cholesky") {
    out.push_back(n);
    out.push_back(n);
  } else if (name == "linalg-lu-det") {
    out.push_back(3);
  } else if (name == "linalg-qr") {
    out.push_back(m * k + k * n);
  } else if (name == "linalg-eigh") {
    out.push_back(n + n * n);
  } else if (name == "linalg-svd") {
    out.push_back(m * k + k + k * n);
  } else {
    out.push_back(m * m + k + n * n);
  }
  return out;
}

std::string run(const std::string& name, void* out, const std::vector<Operand>& srcs,
                const std::function<bool()>& cancelled, bool& stopped, bool& input_error) {
  stopped = false;
  input_error = false;
  std::vector<std::vector<std::int64_t>> shapes;
  for (const Operand& s : srcs) shapes.push_back(s.shape);
  Dims d;
  std::string why;
  if (!dims_of(name, shapes, d, why)) return why;
  for (const Operand& s : srcs) {
    if (s.f64 != srcs[0].f64) return user_name(name) + ": the operands must have one float type";
  }
  if (std::string missing = available(); !missing.empty()) return user_name(name) + ": " + missing;
  std::string error = srcs[0].f64 ? run_all<double>(name, d, out, srcs, cancelled, stopped)
                                  : run_all<float>(name, d, out, srcs, cancelled, stopped);
  if (error.compare(0, kInputError.size(), kInputError) == 0) {
    input_error = true;
    error.erase(0, kInputError.size());
  }
  return error;
}

}  // namespace tl::lapack
