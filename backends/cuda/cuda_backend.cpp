// SPDX-License-Identifier: Apache-2.0
// The CUDA backend (libtensorlisp-cuda.so): NVIDIA GPUs through the CUDA Driver API, loaded
// at run time with dlopen("libcuda.so.1"), so the project builds and runs where there is no
// driver; asking for this backend there is a clear error. Kernels arrive as PTX from the
// JIT's NVPTX code generator and are loaded with cuModuleLoadDataEx (the driver compiles
// them for the device); launches go on one stream, copies too, so they run in order.
//
// Options (key=value words): device=N (the ordinal, default 0), block=N (threads per block,
// default 256; a launch may ask for another, as the JIT's tuner does). Kernels are timed
// with events on the stream. TENSORLISP_LIBCUDA names another driver library (the tests use a fake one).
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "../common/plugin_util.h"
#include "tensorlisp/backend.h"

namespace {

// The Driver API's types and constants used here, as its ABI defines them.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
struct CUevent_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUevent = CUevent_st*;
constexpr CUresult kSuccess = 0;
constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMultiprocessors = 16;
constexpr int kAttrCcMajor = 75;
constexpr int kAttrCcMinor = 76;
constexpr int kJitInfoLog = 3, kJitInfoLogSize = 4, kJitErrorLog = 5, kJitErrorLogSize = 6;
constexpr unsigned kStreamNonBlocking = 1;

// The driver's functions, resolved by name (the _v2 names are those cuda.h maps to).
struct Driver {
  void* lib = nullptr;
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuDeviceTotalMem)(std::size_t*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuStreamCreate)(CUstream*, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, std::size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void*, CUdeviceptr, std::size_t, CUstream);
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned, int*, void**);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                             void**, void**);
  CUresult (*cuEventCreate)(CUevent*, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
};

using tl::backend_util::set_error;

// Loads the driver library and its functions; an empty string, or why not.
std::string load_driver(Driver& d) {
  const char* env = std::getenv("TENSORLISP_LIBCUDA");
  const char* name = env != nullptr && *env != 0 ? env : "libcuda.so.1";
  d.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (d.lib == nullptr) {
    const char* why = dlerror();
    return std::string("no NVIDIA driver here (") + (why ? why : name) + ")";
  }
  std::string missing;
  auto get = [&](auto& fn, const char* sym) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(d.lib, sym));
    if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + sym;
  };
  get(d.cuInit, "cuInit");
  get(d.cuDriverGetVersion, "cuDriverGetVersion");
  get(d.cuDeviceGetCount, "cuDeviceGetCount");
  get(d.cuDeviceGet, "cuDeviceGet");
  get(d.cuDeviceGetName, "cuDeviceGetName");
  get(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  get(d.cuDeviceTotalMem, "cuDeviceTotalMem_v2");
  get(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  get(d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
  get(d.cuCtxSetCurrent, "cuCtxSetCurrent");
  get(d.cuStreamCreate, "cuStreamCreate");
  get(d.cuStreamDestroy, "cuStreamDestroy_v2");
  get(d.cuStreamSynchronize, "cuStreamSynchronize");
  get(d.cuMemAlloc, "cuMemAlloc_v2");
  get(d.cuMemFree, "cuMemFree_v2");
  get(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
  get(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
  get(d.cuModuleLoadDataEx, "cuModuleLoadDataEx");
  get(d.cuModuleGetFunction, "cuModuleGetFunction");
  get(d.cuModuleUnload, "cuModuleUnload");
  get(d.cuLaunchKernel, "cuLaunchKernel");
  get(d.cuEventCreate, "cuEventCreate");
  get(d.cuEventRecord, "cuEventRecord");
  get(d.cuEventSynchronize, "cuEventSynchronize");
  get(d.cuEventDestroy, "cuEventDestroy_v2");
  // CUDA 12.8 added a _v2 (cuda.h maps to it); older drivers have only the first.
  get(d.cuEventElapsedTime, dlsym(d.lib, "cuEventElapsedTime_v2") != nullptr ? "cuEventElapsedTime_v2" : "cuEventElapsedTime");
  get(d.cuGetErrorName, "cuGetErrorName");
  get(d.cuGetErrorString, "cuGetErrorString");
  if (!missing.empty()) {
    dlclose(d.lib);
    d.lib = nullptr;
    return std::string(name) + " lacks " + missing + " (a CUDA 11 or newer driver is needed)";
  }
  return {};
}

struct Context {
  Driver d;
  CUdevice device = 0;
  int ordinal = 0;
  CUcontext ctx = nullptr;
  CUstream stream = nullptr;
  unsigned block = 256;
  int cc_major = 0, cc_minor = 0, max_threads = 1024, multiprocessors = 0;
  std::size_t memory = 0;
  char name[128] = {};
};

struct Kernel {
  CUmodule module = nullptr;
  CUfunction fn = nullptr;
  std::string name;
};

// "CUDA_ERROR_X: description" for a driver result.
std::string describe(const Driver& d, CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  if (d.cuGetErrorName == nullptr || d.cuGetErrorName(r, &name) != kSuccess || name == nullptr) name = "CUDA error";
  if (d.cuGetErrorString == nullptr || d.cuGetErrorString(r, &text) != kSuccess || text == nullptr) text = "";
  return std::string(name) + " (" + std::to_string(r) + ")" + (*text ? std::string(": ") + text : std::string());
}

// Makes the context current on the calling thread; false (with the message) when it fails.
bool current(Context* c, char* err, std::size_t size) {
  CUresult r = c->d.cuCtxSetCurrent(c->ctx);
  if (r == kSuccess) return true;
  set_error(err, size, "cuda: cannot make the context current: " + describe(c->d, r));
  return false;
}

void destroy(void* p) {
  auto* c = static_cast<Context*>(p);
  if (c == nullptr) return;
  if (c->ctx != nullptr) {
    c->d.cuCtxSetCurrent(c->ctx);
    if (c->stream != nullptr) c->d.cuStreamDestroy(c->stream);
    c->d.cuDevicePrimaryCtxRelease(c->device);
  }
  if (c->d.lib != nullptr) dlclose(c->d.lib);
  delete c;
}

void* create(const char* options, char* err, std::size_t size) {
  auto* c = new Context;
  const bool ok = tl::backend_util::for_each_option(options, [&](const std::string& word, const std::string& key, const std::string& v) {
    const long value = v.empty() ? -1 : std::strtol(v.c_str(), nullptr, 10);
    if (key == "device" && value >= 0) {
      c->ordinal = static_cast<int>(value);
    } else if (key == "block" && value >= 32 && value <= 1024 && value % 32 == 0) {
      c->block = static_cast<unsigned>(value);
    } else {
      set_error(err, size, "cuda: bad option \"" + word + "\" (known: device=N, block=N with N a multiple of 32 up to 1024)");
      return false;
    }
    return true;
  });
  if (!ok) {
    delete c;
    return nullptr;
  }
  if (std::string why = load_driver(c->d); !why.empty()) {
    set_error(err, size, "cuda: " + why);
    delete c;
    return nullptr;
  }
  auto fail = [&](const std::string& what, CUresult r) -> void* {
    set_error(err, size, "cuda: " + what + ": " + describe(c->d, r));
    destroy(c);
    return nullptr;
  };
  if (CUresult r = c->d.cuInit(0); r != kSuccess) return fail("cannot initialize the driver", r);
  int count = 0;
  if (CUresult r = c->d.cuDeviceGetCount(&count); r != kSuccess) return fail("cannot count devices", r);
  if (count == 0) {
    set_error(err, size, "cuda: the NVIDIA driver is installed but sees no GPU");
    destroy(c);
    return nullptr;
  }
  if (c->ordinal >= count) {
    set_error(err, size, "cuda: no device " + std::to_string(c->ordinal) + " (this machine has " + std::to_string(count) +
                             ": device=0" + (count > 1 ? " to device=" + std::to_string(count - 1) : std::string()) + ")");
    destroy(c);
    return nullptr;
  }
  if (CUresult r = c->d.cuDeviceGet(&c->device, c->ordinal); r != kSuccess) return fail("cannot open device", r);
  c->d.cuDeviceGetName(c->name, sizeof c->name, c->device);
  c->d.cuDeviceGetAttribute(&c->cc_major, kAttrCcMajor, c->device);
  c->d.cuDeviceGetAttribute(&c->cc_minor, kAttrCcMinor, c->device);
  c->d.cuDeviceGetAttribute(&c->max_threads, kAttrMaxThreadsPerBlock, c->device);
  c->d.cuDeviceGetAttribute(&c->multiprocessors, kAttrMultiprocessors, c->device);
  c->d.cuDeviceTotalMem(&c->memory, c->device);
  if (c->block > static_cast<unsigned>(c->max_threads)) c->block = static_cast<unsigned>(c->max_threads);
  if (CUresult r = c->d.cuDevicePrimaryCtxRetain(&c->ctx, c->device); r != kSuccess) return fail("cannot create a context", r);
  if (CUresult r = c->d.cuCtxSetCurrent(c->ctx); r != kSuccess) return fail("cannot make the context current", r);
  if (CUresult r = c->d.cuStreamCreate(&c->stream, kStreamNonBlocking); r != kSuccess) return fail("cannot create a stream", r);
  return c;
}

int device_info(void* p, tl_device_info* out, char*, std::size_t) {
  auto* c = static_cast<Context*>(p);
  std::memset(out, 0, sizeof *out);
  std::snprintf(out->name, sizeof out->name, "%.100s (sm_%d%d)", c->name, c->cc_major, c->cc_minor);
  out->memory_bytes = c->memory;
  out->compute_units = c->multiprocessors;
  out->host_memory = 0;
  // PTX for the device's compute capability, up to sm_80: LLVM 14 emits no newer, and the
  // driver compiles sm_80 PTX for later GPUs (sm_86, sm_89, sm_90).
  int cc = c->cc_major * 10 + c->cc_minor;
  if (cc > 80) cc = 80;
  std::snprintf(out->target, sizeof out->target, "nvptx:sm_%d", cc);
  return 0;
}

void* alloc(void* p, std::size_t bytes, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return nullptr;
  CUdeviceptr ptr = 0;
  if (CUresult r = c->d.cuMemAlloc(&ptr, std::max<std::size_t>(bytes, 1)); r != kSuccess) {
    set_error(err, size, "cuMemAlloc of " + std::to_string(bytes) + " bytes: " + describe(c->d, r));
    return nullptr;
  }
  return reinterpret_cast<void*>(ptr);
}

void free_memory(void* p, void* ptr) {
  auto* c = static_cast<Context*>(p);
  if (c->d.cuCtxSetCurrent(c->ctx) == kSuccess) c->d.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
}

int copy_in(void* p, void* dst, const void* src, std::size_t bytes, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return 1;
  CUresult r = c->d.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, bytes, c->stream);
  // The host memory may go as soon as this returns.
  if (r == kSuccess) r = c->d.cuStreamSynchronize(c->stream);
  if (r == kSuccess) return 0;
  set_error(err, size, "cuda: copying " + std::to_string(bytes) + " bytes to the device: " + describe(c->d, r));
  return 1;
}

int copy_out(void* p, void* dst, const void* src, std::size_t bytes, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return 1;
  CUresult r = c->d.cuMemcpyDtoHAsync(dst, reinterpret_cast<CUdeviceptr>(src), bytes, c->stream);
  if (r == kSuccess) r = c->d.cuStreamSynchronize(c->stream);
  if (r == kSuccess) return 0;
  // A kernel that faulted earlier reports here, at the first synchronization.
  set_error(err, size, "cuda: copying " + std::to_string(bytes) + " bytes from the device: " + describe(c->d, r));
  return 1;
}

void* compile(void* p, const void* code, std::size_t code_size, const char* entry, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return nullptr;
  std::string ptx(static_cast<const char*>(code), code_size);  // NUL-terminated, as the driver wants
  std::vector<char> info(8192, 0), error(8192, 0);
  int keys[] = {kJitInfoLog, kJitInfoLogSize, kJitErrorLog, kJitErrorLogSize};
  void* values[] = {info.data(), reinterpret_cast<void*>(info.size()), error.data(), reinterpret_cast<void*>(error.size())};
  auto* k = new Kernel;
  k->name = entry;
  CUresult r = c->d.cuModuleLoadDataEx(&k->module, ptx.c_str(), 4, keys, values);
  if (r != kSuccess) {
    set_error(err, size, "cuda: kernel " + k->name + ": the driver cannot load its PTX: " + describe(c->d, r) +
                             (error[0] ? std::string("\n") + error.data() : std::string()));
    delete k;
    return nullptr;
  }
  r = c->d.cuModuleGetFunction(&k->fn, k->module, entry);
  if (r != kSuccess) {
    set_error(err, size, "cuda: kernel " + k->name + " is not in its module: " + describe(c->d, r));
    c->d.cuModuleUnload(k->module);
    delete k;
    return nullptr;
  }
  return k;
}

void release_kernel(void* p, void* kp) {
  auto* c = static_cast<Context*>(p);
  auto* k = static_cast<Kernel*>(kp);
  if (c->d.cuCtxSetCurrent(c->ctx) == kSuccess) c->d.cuModuleUnload(k->module);
  delete k;
}

// Kernel parameters as the JIT's PTX entries take them (backend.h): the buffer pointers, the
// vars, then begin and end; a grid of `block`-thread blocks covering count threads (in
// several launches when it needs more blocks than a grid may have).
int launch(void* p, void* kp, void* const* buffers, std::size_t buffer_count, const int64_t* vars, std::size_t var_count,
           const tl_launch* l, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  auto* k = static_cast<Kernel*>(kp);
  if (!current(c, err, size)) return 1;
  if (l->count <= 0) return 0;
  // Device pointers are CUdeviceptr values, the size of a pointer here.
  static_assert(sizeof(CUdeviceptr) == sizeof(void*));
  const unsigned block = l->block > 0 ? static_cast<unsigned>(std::min<std::int64_t>(l->block, c->max_threads)) : c->block;
  return tl::backend_util::launch_grid(buffers, buffer_count, vars, var_count, *l, block, [&](unsigned blocks, unsigned threads, void** params) {
    CUresult r = c->d.cuLaunchKernel(k->fn, blocks, 1, 1, threads, 1, 1, 0, c->stream, params, nullptr);
    if (r == kSuccess) return 0;
    set_error(err, size, "cuda: launching kernel " + k->name + " (" + std::to_string(blocks) + " blocks of " +
                             std::to_string(threads) + " threads): " + describe(c->d, r));
    return 1;
  });
}

int synchronize(void* p, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return 1;
  if (CUresult r = c->d.cuStreamSynchronize(c->stream); r != kSuccess) {
    set_error(err, size, "cuda: a kernel failed: " + describe(c->d, r));
    return 1;
  }
  return 0;
}

// Events on the launch stream: the device's own clock, without the host's launch overhead.
void* record_event(void* p, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return nullptr;
  CUevent e = nullptr;
  CUresult r = c->d.cuEventCreate(&e, 0);
  if (r == kSuccess) {
    r = c->d.cuEventRecord(e, c->stream);
    if (r == kSuccess) return e;
    c->d.cuEventDestroy(e);
  }
  set_error(err, size, "cuda: recording an event: " + describe(c->d, r));
  return nullptr;
}

int event_seconds(void* p, void* start, void* end, double* seconds, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return 1;
  CUresult r = c->d.cuEventSynchronize(static_cast<CUevent>(end));
  if (r != kSuccess) {
    // A kernel before the event faulted.
    set_error(err, size, "cuda: a kernel failed: " + describe(c->d, r));
    return 1;
  }
  float ms = 0;
  if (r = c->d.cuEventElapsedTime(&ms, static_cast<CUevent>(start), static_cast<CUevent>(end)); r != kSuccess) {
    set_error(err, size, "cuda: timing kernels: " + describe(c->d, r));
    return 1;
  }
  *seconds = ms * 1e-3;
  return 0;
}

void release_event(void* p, void* e) {
  auto* c = static_cast<Context*>(p);
  if (c->d.cuCtxSetCurrent(c->ctx) == kSuccess) c->d.cuEventDestroy(static_cast<CUevent>(e));
}

void* find_extern(void*, const char* name, char* err, std::size_t size) {
  set_error(err, size, std::string("cuda: no external kernel named \"") + name + "\" (the cuda backend has none yet)");
  return nullptr;
}

const tl_backend_api kApi = {
    TL_BACKEND_ABI_VERSION, sizeof(tl_backend_api), "cuda", create, destroy, device_info, alloc, free_memory, copy_in,
    copy_out, compile, release_kernel, launch, synchronize, find_extern, record_event, event_seconds, release_event,
    nullptr,  // set_cancel: launches are queued and return at once; Ctrl-C lands between them
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const tl_backend_api* tl_backend_entry(uint32_t abi_version) {
  return abi_version == TL_BACKEND_ABI_VERSION ? &kApi : nullptr;
}
