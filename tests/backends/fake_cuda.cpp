// SPDX-License-Identifier: Apache-2.0
// A stand-in for NVIDIA's driver library (libcuda.so.1) for testing the CUDA backend on
// machines without a GPU: one fake device of compute capability 9.0 with 4 MiB of host
// memory. Modules must be PTX from TensorLisp's code generator (a .version, a .target and the
// entry asked for); launches are checked, not run: every parameter the entry declares must be
// present, its buffers must be fake device memory and its last two (begin, end) must be
// covered by the grid. A launch that passes the checks returns CUDA_ERROR_NOT_SUPPORTED with
// the message "checked, not run"; one that fails them returns CUDA_ERROR_INVALID_VALUE and
// the details in cuGetErrorString.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kInvalidPtx = 218, kNotFound = 500, kNotSupported = 801;
constexpr std::size_t kMemory = 4u << 20;
std::map<std::uintptr_t, std::size_t> g_allocations;
std::size_t g_used = 0;
std::string g_last_problem;
int g_context, g_stream;

struct Function {
  std::string name;
  int params = 0;  // .param declarations of the entry
};
struct Module {
  std::string ptx;
  std::vector<std::unique_ptr<Function>> functions;  // freed with the module
};

struct Event {
  std::int64_t launches = -1;  // launches that reached the driver when recorded; -1 before
};
std::int64_t g_launches = 0;

bool is_allocation(std::uint64_t p) { return g_allocations.count(static_cast<std::uintptr_t>(p)) != 0; }

}  // namespace

extern "C" {

int cuInit(unsigned) { return kSuccess; }
int cuDriverGetVersion(int* v) {
  *v = 12000;
  return kSuccess;
}
int cuDeviceGetCount(int* n) {
  *n = 1;
  return kSuccess;
}
int cuDeviceGet(int* d, int ordinal) {
  if (ordinal != 0) return kInvalidValue;
  *d = 0;
  return kSuccess;
}
int cuDeviceGetName(char* name, int len, int) {
  std::snprintf(name, static_cast<std::size_t>(len), "TensorLisp fake GPU");
  return kSuccess;
}
int cuDeviceGetAttribute(int* v, int attr, int) {
  switch (attr) {
    case 1: *v = 1024; break;  // max threads per block
    case 16: *v = 4; break;    // multiprocessors
    case 75: *v = 9; break;    // compute capability
    case 76: *v = 0; break;
    default: *v = 0;
  }
  return kSuccess;
}
int cuDeviceTotalMem_v2(std::size_t* bytes, int) {
  *bytes = kMemory;
  return kSuccess;
}
int cuDevicePrimaryCtxRetain(void** ctx, int) {
  *ctx = &g_context;
  return kSuccess;
}
int cuDevicePrimaryCtxRelease_v2(int) { return kSuccess; }
int cuCtxSetCurrent(void* ctx) { return ctx == &g_context ? kSuccess : kInvalidValue; }
int cuStreamCreate(void** s, unsigned) {
  *s = &g_stream;
  return kSuccess;
}
int cuStreamDestroy_v2(void*) { return kSuccess; }
int cuStreamSynchronize(void*) { return kSuccess; }

int cuMemAlloc_v2(std::uint64_t* p, std::size_t bytes) {
  if (g_used + bytes > kMemory) return kOutOfMemory;
  void* m = std::malloc(bytes);
  if (m == nullptr) return kOutOfMemory;
  g_allocations[reinterpret_cast<std::uintptr_t>(m)] = bytes;
  g_used += bytes;
  *p = reinterpret_cast<std::uintptr_t>(m);
  return kSuccess;
}
int cuMemFree_v2(std::uint64_t p) {
  auto it = g_allocations.find(static_cast<std::uintptr_t>(p));
  if (it == g_allocations.end()) return kInvalidValue;
  g_used -= it->second;
  g_allocations.erase(it);
  std::free(reinterpret_cast<void*>(p));
  return kSuccess;
}
int cuMemcpyHtoDAsync_v2(std::uint64_t dst, const void* src, std::size_t bytes, void*) {
  if (!is_allocation(dst)) return kInvalidValue;
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return kSuccess;
}
int cuMemcpyDtoHAsync_v2(void* dst, std::uint64_t src, std::size_t bytes, void*) {
  if (!is_allocation(src)) return kInvalidValue;
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return kSuccess;
}

int cuModuleLoadDataEx(void** module, const void* image, unsigned n, int* keys, void** values) {
  std::string ptx(static_cast<const char*>(image));
  if (ptx.find(".version") == std::string::npos || ptx.find(".target sm_") == std::string::npos) {
    for (unsigned i = 0; i < n; ++i) {
      if (keys[i] == 5) std::snprintf(static_cast<char*>(values[i]), 64, "fake driver: this is not PTX");
    }
    return kInvalidPtx;
  }
  auto* m = new Module;
  m->ptx = std::move(ptx);
  *module = m;
  return kSuccess;
}
int cuModuleGetFunction(void** fn, void* module, const char* name) {
  auto* m = static_cast<Module*>(module);
  const std::string& ptx = m->ptx;
  auto at = ptx.find(std::string(".entry ") + name + "(");
  if (at == std::string::npos) return kNotFound;
  auto close = ptx.find(')', at);
  int params = 0;
  for (auto p = ptx.find(".param", at); p != std::string::npos && p < close; p = ptx.find(".param", p + 1)) ++params;
  m->functions.push_back(std::make_unique<Function>(Function{name, params}));
  *fn = m->functions.back().get();
  return kSuccess;
}
int cuModuleUnload(void* module) {
  delete static_cast<Module*>(module);
  return kSuccess;
}

int cuLaunchKernel(void* fp, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
                   void*, void** params, void** extra) {
  auto* f = static_cast<Function*>(fp);
  auto problem = [&](const std::string& what) {
    g_last_problem = "fake driver: launch of " + f->name + ": " + what;
    return kInvalidValue;
  };
  if (extra != nullptr || shared != 0 || gy != 1 || gz != 1 || by != 1 || bz != 1 || bx == 0 || bx > 1024 || gx == 0) {
    return problem("unexpected grid or block shape");
  }
  if (f->params < 2) return problem("the entry declares fewer than two parameters");
  // Pointers first (fake device memory), then int64 values; the last two are begin and end.
  const auto value = [&](int i) { return *static_cast<const std::int64_t*>(params[i]); };
  const std::int64_t begin = value(f->params - 2), end = value(f->params - 1);
  if (begin < 0 || end <= begin) return problem("begin and end make an empty range");
  if (static_cast<std::int64_t>(gx) * bx < end - begin) return problem("the grid does not cover begin..end");
  int pointers = 0;
  for (int i = 0; i < f->params - 2 && is_allocation(static_cast<std::uint64_t>(value(i))); ++i) ++pointers;
  if (pointers == 0) return problem("its first parameter is not device memory");
  ++g_launches;
  g_last_problem = "fake driver: launch of " + f->name + " checked (" + std::to_string(pointers) + " buffers, " +
                   std::to_string(f->params - 2 - pointers) + " sizes, " + std::to_string(end - begin) +
                   " threads), not run";
  return kNotSupported;
}

// Events count the launches that reached the driver: a pair of them is 1 ms per launch
// between them. Only the first cuEventElapsedTime is here (drivers before CUDA 12.8).
int cuEventCreate(void** e, unsigned flags) {
  if (flags != 0) return kInvalidValue;
  *e = new Event;
  return kSuccess;
}
int cuEventRecord(void* e, void* stream) {
  if (stream != &g_stream) return kInvalidValue;
  static_cast<Event*>(e)->launches = g_launches;
  return kSuccess;
}
int cuEventSynchronize(void* e) { return static_cast<Event*>(e)->launches < 0 ? kInvalidValue : kSuccess; }
int cuEventElapsedTime(float* ms, void* start, void* end) {
  const auto* a = static_cast<Event*>(start);
  const auto* b = static_cast<Event*>(end);
  if (a->launches < 0 || b->launches < 0) return kInvalidValue;
  *ms = static_cast<float>(b->launches - a->launches);
  return kSuccess;
}
int cuEventDestroy_v2(void* e) {
  delete static_cast<Event*>(e);
  return kSuccess;
}

int cuGetErrorName(int r, const char** name) {
  switch (r) {
    case kInvalidValue: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case kOutOfMemory: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case kInvalidPtx: *name = "CUDA_ERROR_INVALID_PTX"; break;
    case kNotFound: *name = "CUDA_ERROR_NOT_FOUND"; break;
    case kNotSupported: *name = "CUDA_ERROR_NOT_SUPPORTED"; break;
    default: *name = "CUDA_ERROR_UNKNOWN";
  }
  return kSuccess;
}
int cuGetErrorString(int r, const char** text) {
  *text = (r == kInvalidValue || r == kNotSupported) && !g_last_problem.empty() ? g_last_problem.c_str()
          : r == kOutOfMemory                                                  ? "out of memory"
                                                                               : "";
  return kSuccess;
}

}  // extern "C"
