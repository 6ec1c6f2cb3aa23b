// SPDX-License-Identifier: Apache-2.0
// The HIP backend (libtensorlisp-hip.so): AMD GPUs through the HIP runtime, loaded at run time
// with dlopen("libamdhip64.so"), so the project builds and runs where ROCm is not installed;
// asking for this backend there is a clear error. Kernels arrive as AMDGPU code objects from
// the JIT's AMDGPU code generator (linked by ld.lld), are loaded with hipModuleLoadData and
// run with hipModuleLaunchKernel on one stream, in blocks of 256 threads (the block size the
// code generator compiles for).
//
// Options (key=value words): device=N (default 0), arch=gfxNNN (the code objects' target,
// default gfx90a: it must be the GPU's). TENSORLISP_LIBAMDHIP names another runtime library.
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

using tl::backend_util::set_error;

// The HIP runtime's types used here, as its ABI defines them.
using hipError_t = int;
struct ihipModule_t;
struct ihipModuleSymbol_t;
struct ihipStream_t;
struct ihipEvent_t;
using hipModule_t = ihipModule_t*;
using hipFunction_t = ihipModuleSymbol_t*;
using hipStream_t = ihipStream_t*;
using hipEvent_t = ihipEvent_t*;
constexpr hipError_t kSuccess = 0;
constexpr unsigned kBlock = 256;  // codegen::kAmdgpuBlockSize

struct Runtime {
  void* lib = nullptr;
  hipError_t (*hipInit)(unsigned);
  hipError_t (*hipGetDeviceCount)(int*);
  hipError_t (*hipSetDevice)(int);
  hipError_t (*hipDeviceGetName)(char*, int, int);
  hipError_t (*hipDeviceTotalMem)(std::size_t*, int);
  hipError_t (*hipStreamCreate)(hipStream_t*);
  hipError_t (*hipStreamDestroy)(hipStream_t);
  hipError_t (*hipStreamSynchronize)(hipStream_t);
  hipError_t (*hipMalloc)(void**, std::size_t);
  hipError_t (*hipFree)(void*);
  hipError_t (*hipMemcpyHtoDAsync)(void*, void*, std::size_t, hipStream_t);
  hipError_t (*hipMemcpyDtoHAsync)(void*, void*, std::size_t, hipStream_t);
  hipError_t (*hipModuleLoadData)(hipModule_t*, const void*);
  hipError_t (*hipModuleGetFunction)(hipFunction_t*, hipModule_t, const char*);
  hipError_t (*hipModuleUnload)(hipModule_t);
  hipError_t (*hipModuleLaunchKernel)(hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                      hipStream_t, void**, void**);
  hipError_t (*hipEventCreate)(hipEvent_t*);
  hipError_t (*hipEventRecord)(hipEvent_t, hipStream_t);
  hipError_t (*hipEventSynchronize)(hipEvent_t);
  hipError_t (*hipEventElapsedTime)(float*, hipEvent_t, hipEvent_t);
  hipError_t (*hipEventDestroy)(hipEvent_t);
  const char* (*hipGetErrorName)(hipError_t);
  const char* (*hipGetErrorString)(hipError_t);
};

std::string load_runtime(Runtime& r) {
  const char* env = std::getenv("TENSORLISP_LIBAMDHIP");
  const char* name = env != nullptr && *env != 0 ? env : "libamdhip64.so";
  r.lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (r.lib == nullptr) {
    const char* error = dlerror();
    const std::string why = error != nullptr ? error : name;
    // ROCm's usual place, when it is not on the loader's path.
    if (env == nullptr) r.lib = dlopen("/opt/rocm/lib/libamdhip64.so", RTLD_NOW | RTLD_LOCAL);
    if (r.lib == nullptr) return "no ROCm HIP runtime here (" + why + ")";
  }
  std::string missing;
  auto get = [&](auto& fn, const char* sym) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(r.lib, sym));
    if (fn == nullptr) missing += std::string(missing.empty() ? "" : ", ") + sym;
  };
  get(r.hipInit, "hipInit");
  get(r.hipGetDeviceCount, "hipGetDeviceCount");
  get(r.hipSetDevice, "hipSetDevice");
  get(r.hipDeviceGetName, "hipDeviceGetName");
  get(r.hipDeviceTotalMem, "hipDeviceTotalMem");
  get(r.hipStreamCreate, "hipStreamCreate");
  get(r.hipStreamDestroy, "hipStreamDestroy");
  get(r.hipStreamSynchronize, "hipStreamSynchronize");
  get(r.hipMalloc, "hipMalloc");
  get(r.hipFree, "hipFree");
  get(r.hipMemcpyHtoDAsync, "hipMemcpyHtoDAsync");
  get(r.hipMemcpyDtoHAsync, "hipMemcpyDtoHAsync");
  get(r.hipModuleLoadData, "hipModuleLoadData");
  get(r.hipModuleGetFunction, "hipModuleGetFunction");
  get(r.hipModuleUnload, "hipModuleUnload");
  get(r.hipModuleLaunchKernel, "hipModuleLaunchKernel");
  get(r.hipEventCreate, "hipEventCreate");
  get(r.hipEventRecord, "hipEventRecord");
  get(r.hipEventSynchronize, "hipEventSynchronize");
  get(r.hipEventElapsedTime, "hipEventElapsedTime");
  get(r.hipEventDestroy, "hipEventDestroy");
  get(r.hipGetErrorName, "hipGetErrorName");
  get(r.hipGetErrorString, "hipGetErrorString");
  if (!missing.empty()) {
    dlclose(r.lib);
    r.lib = nullptr;
    return std::string(name) + " lacks " + missing;
  }
  return {};
}

struct Context {
  Runtime r;
  int device = 0;
  std::string arch = "gfx90a";
  hipStream_t stream = nullptr;
  std::size_t memory = 0;
  char name[128] = {};
};

struct Kernel {
  hipModule_t module = nullptr;
  hipFunction_t fn = nullptr;
  std::string name;
};

std::string describe(const Runtime& r, hipError_t e) {
  const char* name = r.hipGetErrorName ? r.hipGetErrorName(e) : nullptr;
  const char* text = r.hipGetErrorString ? r.hipGetErrorString(e) : nullptr;
  return std::string(name ? name : "hipError") + " (" + std::to_string(e) + ")" + (text && *text ? std::string(": ") + text : "");
}

bool current(Context* c, char* err, std::size_t size) {
  hipError_t e = c->r.hipSetDevice(c->device);
  if (e == kSuccess) return true;
  set_error(err, size, "hip: cannot select device " + std::to_string(c->device) + ": " + describe(c->r, e));
  return false;
}

void destroy(void* p) {
  auto* c = static_cast<Context*>(p);
  if (c == nullptr) return;
  if (c->stream != nullptr) c->r.hipStreamDestroy(c->stream);
  if (c->r.lib != nullptr) dlclose(c->r.lib);
  delete c;
}

void* create(const char* options, char* err, std::size_t size) {
  auto* c = new Context;
  const bool ok = tl::backend_util::for_each_option(options, [&](const std::string& word, const std::string& key, const std::string& v) {
    if (key == "device" && !v.empty() && std::strtol(v.c_str(), nullptr, 10) >= 0) {
      c->device = static_cast<int>(std::strtol(v.c_str(), nullptr, 10));
    } else if (key == "arch" && v.rfind("gfx", 0) == 0 && v.size() > 3 && v.size() < 16) {
      c->arch = v;
    } else {
      set_error(err, size, "hip: bad option \"" + word + "\" (known: device=N, arch=gfxNNN)");
      return false;
    }
    return true;
  });
  if (!ok) {
    delete c;
    return nullptr;
  }
  if (std::string why = load_runtime(c->r); !why.empty()) {
    set_error(err, size, "hip: " + why);
    delete c;
    return nullptr;
  }
  auto fail = [&](const std::string& what, hipError_t e) -> void* {
    set_error(err, size, "hip: " + what + ": " + describe(c->r, e));
    destroy(c);
    return nullptr;
  };
  if (hipError_t e = c->r.hipInit(0); e != kSuccess) return fail("cannot initialize the runtime", e);
  int count = 0;
  if (hipError_t e = c->r.hipGetDeviceCount(&count); e != kSuccess || count == 0) {
    set_error(err, size, "hip: the ROCm runtime is installed but sees no GPU" + (e != kSuccess ? " (" + describe(c->r, e) + ")" : std::string()));
    destroy(c);
    return nullptr;
  }
  if (c->device >= count) {
    set_error(err, size, "hip: no device " + std::to_string(c->device) + " (this machine has " + std::to_string(count) + ")");
    destroy(c);
    return nullptr;
  }
  if (!current(c, err, size)) {
    destroy(c);
    return nullptr;
  }
  c->r.hipDeviceGetName(c->name, sizeof c->name, c->device);
  c->r.hipDeviceTotalMem(&c->memory, c->device);
  if (hipError_t e = c->r.hipStreamCreate(&c->stream); e != kSuccess) return fail("cannot create a stream", e);
  return c;
}

int device_info(void* p, tl_device_info* out, char*, std::size_t) {
  auto* c = static_cast<Context*>(p);
  std::memset(out, 0, sizeof *out);
  std::snprintf(out->name, sizeof out->name, "%.100s (%.20s)", c->name, c->arch.c_str());
  out->memory_bytes = c->memory;
  out->host_memory = 0;
  std::snprintf(out->target, sizeof out->target, "amdgcn:%s", c->arch.c_str());
  return 0;
}

void* alloc(void* p, std::size_t bytes, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return nullptr;
  void* ptr = nullptr;
  if (hipError_t e = c->r.hipMalloc(&ptr, std::max<std::size_t>(bytes, 1)); e != kSuccess) {
    set_error(err, size, "hipMalloc of " + std::to_string(bytes) + " bytes: " + describe(c->r, e));
    return nullptr;
  }
  return ptr;
}

void free_memory(void* p, void* ptr) {
  auto* c = static_cast<Context*>(p);
  if (c->r.hipSetDevice(c->device) == kSuccess) c->r.hipFree(ptr);
}

int copy_in(void* p, void* dst, const void* src, std::size_t bytes, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return 1;
  hipError_t e = c->r.hipMemcpyHtoDAsync(dst, const_cast<void*>(src), bytes, c->stream);
  if (e == kSuccess) e = c->r.hipStreamSynchronize(c->stream);
  if (e == kSuccess) return 0;
  set_error(err, size, "hip: copying " + std::to_string(bytes) + " bytes to the device: " + describe(c->r, e));
  return 1;
}

int copy_out(void* p, void* dst, const void* src, std::size_t bytes, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return 1;
  hipError_t e = c->r.hipMemcpyDtoHAsync(dst, const_cast<void*>(src), bytes, c->stream);
  if (e == kSuccess) e = c->r.hipStreamSynchronize(c->stream);
  if (e == kSuccess) return 0;
  set_error(err, size, "hip: copying " + std::to_string(bytes) + " bytes from the device: " + describe(c->r, e));
  return 1;
}

void* compile(void* p, const void* code, std::size_t, const char* entry, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return nullptr;
  auto* k = new Kernel;
  k->name = entry;
  if (hipError_t e = c->r.hipModuleLoadData(&k->module, code); e != kSuccess) {
    set_error(err, size, "hip: kernel " + k->name + ": the runtime cannot load its " + c->arch + " code object: " +
                             describe(c->r, e) + " (is the GPU a " + c->arch + "? set arch=gfxNNN in the options)");
    delete k;
    return nullptr;
  }
  if (hipError_t e = c->r.hipModuleGetFunction(&k->fn, k->module, entry); e != kSuccess) {
    set_error(err, size, "hip: kernel " + k->name + " is not in its code object: " + describe(c->r, e));
    c->r.hipModuleUnload(k->module);
    delete k;
    return nullptr;
  }
  return k;
}

void release_kernel(void* p, void* kp) {
  auto* c = static_cast<Context*>(p);
  auto* k = static_cast<Kernel*>(kp);
  if (c->r.hipSetDevice(c->device) == kSuccess) c->r.hipModuleUnload(k->module);
  delete k;
}

int launch(void* p, void* kp, void* const* buffers, std::size_t buffer_count, const int64_t* vars, std::size_t var_count,
           const tl_launch* l, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  auto* k = static_cast<Kernel*>(kp);
  if (!current(c, err, size)) return 1;
  if (l->count <= 0) return 0;
  if (l->group == 0 && l->block > 0 && l->block != kBlock) {
    set_error(err, size, "hip: kernel " + k->name + " is compiled for blocks of " + std::to_string(kBlock) +
                             " threads, not " + std::to_string(l->block));
    return 1;
  }
  return tl::backend_util::launch_grid(buffers, buffer_count, vars, var_count, *l, kBlock, [&](unsigned blocks, unsigned threads, void** params) {
    hipError_t e = c->r.hipModuleLaunchKernel(k->fn, blocks, 1, 1, threads, 1, 1, 0, c->stream, params, nullptr);
    if (e == kSuccess) return 0;
    set_error(err, size, "hip: launching kernel " + k->name + " (" + std::to_string(blocks) + " blocks of " +
                             std::to_string(threads) + " threads): " + describe(c->r, e));
    return 1;
  });
}

int synchronize(void* p, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return 1;
  if (hipError_t e = c->r.hipStreamSynchronize(c->stream); e != kSuccess) {
    set_error(err, size, "hip: a kernel failed: " + describe(c->r, e));
    return 1;
  }
  return 0;
}

// Events on the launch stream: the device's own clock.
void* record_event(void* p, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return nullptr;
  hipEvent_t e = nullptr;
  hipError_t r = c->r.hipEventCreate(&e);
  if (r == kSuccess) {
    r = c->r.hipEventRecord(e, c->stream);
    if (r == kSuccess) return e;
    c->r.hipEventDestroy(e);
  }
  set_error(err, size, "hip: recording an event: " + describe(c->r, r));
  return nullptr;
}

int event_seconds(void* p, void* start, void* end, double* seconds, char* err, std::size_t size) {
  auto* c = static_cast<Context*>(p);
  if (!current(c, err, size)) return 1;
  if (hipError_t r = c->r.hipEventSynchronize(static_cast<hipEvent_t>(end)); r != kSuccess) {
    set_error(err, size, "hip: a kernel failed: " + describe(c->r, r));
    return 1;
  }
  float ms = 0;
  if (hipError_t r = c->r.hipEventElapsedTime(&ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(end)); r != kSuccess) {
    set_error(err, size, "hip: timing kernels: " + describe(c->r, r));
    return 1;
  }
  *seconds = ms * 1e-3;
  return 0;
}

void release_event(void* p, void* e) {
  auto* c = static_cast<Context*>(p);
  if (c->r.hipSetDevice(c->device) == kSuccess) c->r.hipEventDestroy(static_cast<hipEvent_t>(e));
}

void* find_extern(void*, const char* name, char* err, std::size_t size) {
  set_error(err, size, std::string("hip: no external kernel named \"") + name + "\" (the hip backend has none yet)");
  return nullptr;
}

const tl_backend_api kApi = {
    TL_BACKEND_ABI_VERSION, sizeof(tl_backend_api), "hip", create, destroy, device_info, alloc, free_memory, copy_in,
    copy_out, compile, release_kernel, launch, synchronize, find_extern, record_event, event_seconds, release_event,
    nullptr,  // set_cancel: launches are queued and return at once; Ctrl-C lands between them
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const tl_backend_api* tl_backend_entry(uint32_t abi_version) {
  return abi_version == TL_BACKEND_ABI_VERSION ? &kApi : nullptr;
}
