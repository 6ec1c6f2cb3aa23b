// SPDX-License-Identifier: Apache-2.0
#include "fftw.h"

#include <dlfcn.h>

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <tuple>

namespace tl::fftw {

namespace {

// FFTW's "advanced" interface, the few entry points used (fftw3.h's declarations; a plan is
// an opaque pointer, a complex number two reals).
template <class T>
struct Fns {
  using Plan = void*;
  Plan (*plan_many_dft)(int rank, const int* n, int howmany, T* in, const int* inembed, int istride, int idist, T* out,
                        const int* onembed, int ostride, int odist, int sign, unsigned flags) = nullptr;
  Plan (*plan_many_dft_r2c)(int rank, const int* n, int howmany, T* in, const int* inembed, int istride, int idist,
                            T* out, const int* onembed, int ostride, int odist, unsigned flags) = nullptr;
  Plan (*plan_many_dft_c2r)(int rank, const int* n, int howmany, T* in, const int* inembed, int istride, int idist,
                            T* out, const int* onembed, int ostride, int odist, unsigned flags) = nullptr;
  void (*execute_dft)(Plan p, T* in, T* out) = nullptr;
  void (*execute_dft_r2c)(Plan p, T* in, T* out) = nullptr;
  void (*execute_dft_c2r)(Plan p, T* in, T* out) = nullptr;
  int (*alignment_of)(T* p) = nullptr;
  void (*destroy_plan)(Plan p) = nullptr;
  void (*cleanup)() = nullptr;
};

constexpr unsigned kEstimate = 1U << 6, kPreserveInput = 1U << 4;
constexpr int kForward = -1, kBackward = 1;

struct Library {
  Fns<float> s;
  Fns<double> d;
  std::string error;
};

template <class F>
bool find(void* h, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(h, name));
  return f != nullptr;
}

template <class T>
bool load(const char* file, const char* prefix, Fns<T>& f) {
  void* h = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) return false;
  const std::string p = prefix;
  bool ok = find(h, (p + "plan_many_dft").c_str(), f.plan_many_dft) &&
            find(h, (p + "plan_many_dft_r2c").c_str(), f.plan_many_dft_r2c) &&
            find(h, (p + "plan_many_dft_c2r").c_str(), f.plan_many_dft_c2r) &&
            find(h, (p + "execute_dft").c_str(), f.execute_dft) &&
            find(h, (p + "execute_dft_r2c").c_str(), f.execute_dft_r2c) &&
            find(h, (p + "execute_dft_c2r").c_str(), f.execute_dft_c2r) &&
            find(h, (p + "alignment_of").c_str(), f.alignment_of) &&
            find(h, (p + "destroy_plan").c_str(), f.destroy_plan) && find(h, (p + "cleanup").c_str(), f.cleanup);
  if (!ok) {
    f = {};
    dlclose(h);
  }
  return ok;
}

const Library& library() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    if (!load("libfftw3f.so.3", "fftwf_", lib.s) || !load("libfftw3.so.3", "fftw_", lib.d)) {
      lib.error = "no FFTW library found (install libfftw3-single3 and libfftw3-double3)";
    }
  });
  return lib;
}

template <class T>
const Fns<T>& fns() {
  if constexpr (std::is_same_v<T, float>) return library().s;
  else return library().d;
}

const std::vector<std::string> kNames = {"fft-c2c", "fft-c2c-inverse", "fft-r2c", "fft-c2r-even", "fft-c2r-odd"};

std::string shape_text(const std::vector<std::int64_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? " " : "") + std::to_string(s[i]);
  return t + ")";
}

// The transform's length N, the batch, and whether the input holds complex parts.
struct Dims {
  std::int64_t n = 0, batch = 1;
};

bool dims_of(const std::string& name, const std::vector<std::vector<std::int64_t>>& shapes, Dims& d, std::string& why) {
  if (shapes.size() != 1) {
    why = name + ": takes one operand, got " + std::to_string(shapes.size());
    return false;
  }
  const auto& s = shapes[0];
  const bool complex_in = name != "fft-r2c";
  if (s.size() < (complex_in ? 2u : 1u) || (complex_in && s.back() != 2)) {
    why = name + ": the operand must be " + (complex_in ? "complex parts (... N 2)" : "real (... N)") + ", got " +
          shape_text(s);
    return false;
  }
  const std::size_t axis = complex_in ? s.size() - 2 : s.size() - 1;
  const std::int64_t m = s[axis];
  for (std::size_t i = 0; i < axis; ++i) d.batch *= s[i];
  if (name == "fft-c2r-even") d.n = 2 * (m - 1);
  else if (name == "fft-c2r-odd") d.n = 2 * m - 1;
  else d.n = m;
  if (d.n < 1 || d.n > INT_MAX || d.batch > INT_MAX) {
    why = name + ": a transform of " + std::to_string(d.n) + " points in a batch of " + std::to_string(d.batch) +
          " is out of FFTW's range";
    return false;
  }
  return true;
}

// Plans by (kind, n, rows, precision, the arrays' alignments): FFTW_ESTIMATE plans, made
// once (the planner is not thread-safe: under a lock), executed on any arrays of the same
// alignment (FFTW's new-array execute) and never destroyed (another thread may be executing
// one). A batch runs in chunks of at most kChunkRows rows, so the plans stay few however many
// batch sizes a program uses (a loop over signals of every length).
struct Key {
  std::string kind;
  std::int64_t n, batch;
  bool f64;
  int in_align, out_align;
  bool operator<(const Key& o) const {
    return std::tie(kind, n, batch, f64, in_align, out_align) <
           std::tie(o.kind, o.n, o.batch, o.f64, o.in_align, o.out_align);
  }
};

// The plans, kept for the process (a few per size used). At exit they are destroyed and FFTW
// frees what it holds (fftw_cleanup), so nothing it allocated outlives the program.
struct PlanCache {
  std::mutex mutex;
  std::map<Key, void*> plans;
  ~PlanCache() {
    std::lock_guard<std::mutex> lock(mutex);
    const Library& lib = library();
    for (const auto& [key, plan] : plans) (key.f64 ? lib.d.destroy_plan : lib.s.destroy_plan)(plan);
    plans.clear();
    if (lib.error.empty()) {
      lib.s.cleanup();
      lib.d.cleanup();
    }
  }
};

PlanCache& plan_cache() {
  static PlanCache cache;
  return cache;
}

constexpr std::int64_t kChunkRows = 64;

template <class T>
std::string run_rows(const std::string& name, int n, int batch, T* out, T* in);

template <class T>
std::string run_typed(const std::string& name, const Dims& d, T* out, T* in) {
  const std::int64_t n = d.n, half = n / 2 + 1;
  // Reals per row of the input and of the output.
  const std::int64_t in_row = name == "fft-r2c"                                 ? n
                              : name == "fft-c2r-even" || name == "fft-c2r-odd" ? 2 * half
                                                                                : 2 * n;
  const std::int64_t out_row = name == "fft-r2c"                                 ? 2 * half
                               : name == "fft-c2r-even" || name == "fft-c2r-odd" ? n
                                                                                 : 2 * n;
  for (std::int64_t b = 0; b < d.batch; b += kChunkRows) {
    const auto rows = static_cast<int>(std::min(kChunkRows, d.batch - b));
    if (std::string why = run_rows<T>(name, static_cast<int>(n), rows, out + b * out_row, in + b * in_row);
        !why.empty()) {
      return why;
    }
  }
  return {};
}

template <class T>
std::string run_rows(const std::string& name, int n, int batch, T* out, T* in) {
  const Fns<T>& f = fns<T>();
  const int half = n / 2 + 1;
  const int in_align = f.alignment_of(in), out_align = f.alignment_of(out);
  void* plan = nullptr;
  {
    PlanCache& cache = plan_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    Key key{name, n, batch, std::is_same_v<T, double>, in_align, out_align};
    auto it = cache.plans.find(key);
    if (it != cache.plans.end()) {
      plan = it->second;
    } else {
      if (name == "fft-c2c" || name == "fft-c2c-inverse") {
        plan = f.plan_many_dft(1, &n, batch, in, nullptr, 1, n, out, nullptr, 1, n,
                               name == "fft-c2c" ? kForward : kBackward, kEstimate);
      } else if (name == "fft-r2c") {
        plan = f.plan_many_dft_r2c(1, &n, batch, in, nullptr, 1, n, out, nullptr, 1, half, kEstimate);
      } else {
        plan = f.plan_many_dft_c2r(1, &n, batch, in, nullptr, 1, half, out, nullptr, 1, n, kEstimate | kPreserveInput);
      }
      if (plan == nullptr) return name + ": FFTW made no plan for " + std::to_string(n) + " points";
      cache.plans.emplace(key, plan);
    }
  }
  if (name == "fft-c2c" || name == "fft-c2c-inverse") f.execute_dft(plan, in, out);
  else if (name == "fft-r2c") f.execute_dft_r2c(plan, in, out);
  else f.execute_dft_c2r(plan, in, out);
  return {};
}

}  // namespace

bool is_kernel(const std::string& name) { return std::find(kNames.begin(), kNames.end(), name) != kNames.end(); }

const std::vector<std::string>& kernel_names() { return kNames; }

std::string available() { return library().error; }

std::vector<std::int64_t> output_shape(const std::string& name, const std::vector<std::vector<std::int64_t>>& shapes,
                                       std::string& why) {
  Dims d;
  if (!dims_of(name, shapes, d, why)) return {};
  const auto& s = shapes[0];
  std::vector<std::int64_t> out(s.begin(), s.end() - (name == "fft-r2c" ? 1 : 2));
  if (name == "fft-c2c" || name == "fft-c2c-inverse") {
    out.push_back(d.n);
    out.push_back(2);
  } else if (name == "fft-r2c") {
    out.push_back(d.n / 2 + 1);
    out.push_back(2);
  } else {
    out.push_back(d.n);
  }
  return out;
}

std::string run(const std::string& name, void* out, const std::vector<Operand>& srcs) {
  std::vector<std::vector<std::int64_t>> shapes;
  for (const Operand& s : srcs) shapes.push_back(s.shape);
  Dims d;
  std::string why;
  if (!dims_of(name, shapes, d, why)) return why;
  if (std::string missing = available(); !missing.empty()) return name + ": " + missing;
  if (d.batch == 0) return {};
  // FFTW reads the input without writing it (c2r with FFTW_PRESERVE_INPUT).
  void* in = const_cast<void*>(srcs[0].data);
  return srcs[0].f64 ? run_typed<double>(name, d, static_cast<double*>(out), static_cast<double*>(in))
                     : run_typed<float>(name, d, static_cast<float*>(out), static_cast<float*>(in));
}

}  // namespace tl::fftw
