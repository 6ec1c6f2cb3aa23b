// SPDX-License-Identifier: Apache-2.0
// The HIP backend (libtensorlisp-hip.so): AMD GPUs through the HIP runtime, loaded at run time
// with dlopen("libamdhip64.so"), so the project builds and runs where ROCm is not installed;
// asking for this backend there is a clear error. Kernels arrive as AMDGPU code objects from
// the JIT's AMDGPU code generator (linked by ld.lld), are loaded with hipModuleLoadData and
// run with hipModuleLaunchKernel on one stream, in blocks of 256 threads (the block size the
// code generator compiles for). What it shares with the CUDA backend is in
// ../common/gpu_backend.h; this file says what differs.
//
// Options (key=value words): device=N (default 0), arch=gfxNNN (the code objects' target,
// default gfx90a: it must be the GPU's). TENSORLISP_LIBAMDHIP names another runtime library.
#include <cstdint>
#include <cstdio>
#include <string>

#include "../common/gpu_backend.h"
#include "tensorlisp/backend.h"

namespace {

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
constexpr unsigned kBlock = 256;  // codegen::kAmdgpuBlockSize

// The runtime's functions, X(slot, symbol, result, parameters), resolved by name in this order.
#define TL_HIP_ENTRY_POINTS(X)                                                                                 \
  X(init, "hipInit", hipError_t, (unsigned))                                                                   \
  X(get_device_count, "hipGetDeviceCount", hipError_t, (int*))                                                 \
  X(set_device, "hipSetDevice", hipError_t, (int))                                                             \
  X(device_get_name, "hipDeviceGetName", hipError_t, (char*, int, int))                                        \
  X(device_total_mem, "hipDeviceTotalMem", hipError_t, (std::size_t*, int))                                    \
  X(stream_create, "hipStreamCreate", hipError_t, (hipStream_t*))                                              \
  X(stream_destroy, "hipStreamDestroy", hipError_t, (hipStream_t))                                             \
  X(stream_synchronize, "hipStreamSynchronize", hipError_t, (hipStream_t))                                     \
  X(mem_alloc, "hipMalloc", hipError_t, (void**, std::size_t))                                                 \
  X(mem_free, "hipFree", hipError_t, (void*))                                                                  \
  X(memcpy_htod_async, "hipMemcpyHtoDAsync", hipError_t, (void*, void*, std::size_t, hipStream_t))             \
  X(memcpy_dtoh_async, "hipMemcpyDtoHAsync", hipError_t, (void*, void*, std::size_t, hipStream_t))             \
  X(module_load_data, "hipModuleLoadData", hipError_t, (hipModule_t*, const void*))                            \
  X(module_get_function, "hipModuleGetFunction", hipError_t, (hipFunction_t*, hipModule_t, const char*))       \
  X(module_unload, "hipModuleUnload", hipError_t, (hipModule_t))                                               \
  X(launch_kernel, "hipModuleLaunchKernel", hipError_t,                                                        \
    (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, hipStream_t, void**, \
     void**))                                                                                                  \
  X(event_create, "hipEventCreate", hipError_t, (hipEvent_t*))                                                 \
  X(event_record, "hipEventRecord", hipError_t, (hipEvent_t, hipStream_t))                                     \
  X(event_synchronize, "hipEventSynchronize", hipError_t, (hipEvent_t))                                        \
  X(event_elapsed_time, "hipEventElapsedTime", hipError_t, (float*, hipEvent_t, hipEvent_t))                   \
  X(event_destroy, "hipEventDestroy", hipError_t, (hipEvent_t))                                                \
  X(get_error_name, "hipGetErrorName", const char*, (hipError_t))                                              \
  X(get_error_string, "hipGetErrorString", const char*, (hipError_t))

struct Hip;
using Context = tl::gpu::Context<Hip>;

// What the HIP runtime does its own way; see gpu_backend.h for each member's part.
struct Hip {
  static constexpr const char* kName = "hip";
  static constexpr const char* kLibraryEnv = "TENSORLISP_LIBAMDHIP";
  static constexpr const char* kLibrary = "libamdhip64.so";
  static constexpr const char* kLibraryFallback = "/opt/rocm/lib/libamdhip64.so";  // ROCm's usual place
  static constexpr const char* kDriverNoun = "ROCm HIP runtime";
  static constexpr const char* kLacksHint = "";
  static constexpr const char* kOptions = "arch=gfxNNN";
  static constexpr const char* kAllocCall = "hipMalloc";
  static constexpr const char* kModuleNoun = "code object";

  using Result = hipError_t;
  static constexpr Result kSuccess = 0;
  using DevicePtr = void*;
  using Stream = hipStream_t;
  using Event = hipEvent_t;
  using Module = hipModule_t;
  using Function = hipFunction_t;

  struct Entries {
    TL_HIP_ENTRY_POINTS(TL_GPU_ENTRY_FIELD)
    void resolve(tl::gpu::DriverLibrary& lib) { TL_HIP_ENTRY_POINTS(TL_GPU_ENTRY_RESOLVE) }
  };

  // The code objects' target (arch=gfxNNN).
  struct State {
    std::string arch = "gfx90a";
  };

  // "hipErrorX (n): description" for a runtime result.
  static std::string describe(const Entries& d, hipError_t e) {
    const char* name = d.get_error_name ? d.get_error_name(e) : nullptr;
    const char* text = d.get_error_string ? d.get_error_string(e) : nullptr;
    return tl::gpu::describe_status(name, "hipError", e, text);
  }

  static bool set_option(Context& c, const std::string& key, const std::string& v) {
    if (key != "arch" || v.rfind("gfx", 0) != 0 || v.size() <= 3 || v.size() >= 16) return false;
    c.state.arch = v;
    return true;
  }

  static std::string open(Context& c) {
    const Entries& d = c.d;
    auto failed = [&](const std::string& what, hipError_t e) { return what + ": " + describe(d, e); };
    if (hipError_t e = d.init(0); e != kSuccess) return failed("cannot initialize the runtime", e);
    int count = 0;
    if (hipError_t e = d.get_device_count(&count); e != kSuccess || count == 0) {
      return "the ROCm runtime is installed but sees no GPU" +
             (e != kSuccess ? " (" + describe(d, e) + ")" : std::string());
    }
    if (c.ordinal >= count) {
      return "no device " + std::to_string(c.ordinal) + " (this machine has " + std::to_string(count) + ")";
    }
    if (hipError_t e = make_current(c); e != kSuccess) return failed(current_failure(c), e);
    d.device_get_name(c.name, sizeof c.name, c.ordinal);
    d.device_total_mem(&c.memory, c.ordinal);
    if (hipError_t e = d.stream_create(&c.stream); e != kSuccess) return failed("cannot create a stream", e);
    return {};
  }

  static void close(Context& c) {
    if (c.stream != nullptr) c.d.stream_destroy(c.stream);
  }

  static hipError_t make_current(Context& c) { return c.d.set_device(c.ordinal); }
  static std::string current_failure(const Context& c) { return "cannot select device " + std::to_string(c.ordinal); }

  static void device_info(const Context& c, tl_device_info& out) {
    std::snprintf(out.name, sizeof out.name, "%.100s (%.20s)", c.name, c.state.arch.c_str());
    std::snprintf(out.target, sizeof out.target, "amdgcn:%s", c.state.arch.c_str());
  }

  static std::string load_module(Context& c, const void* code, std::size_t, hipModule_t& module) {
    hipError_t e = c.d.module_load_data(&module, code);
    if (e == kSuccess) return {};
    const std::string& arch = c.state.arch;
    return "the runtime cannot load its " + arch + " code object: " + describe(c.d, e) + " (is the GPU a " + arch +
           "? set arch=gfxNNN in the options)";
  }

  static hipError_t create_event(const Entries& d, hipEvent_t* e) { return d.event_create(e); }

  // The block size the code generator compiles for; a launch may not ask for another.
  static std::string pick_block(const Context&, const tl_launch& l, unsigned& block) {
    block = kBlock;
    if (l.group != 0 || l.block <= 0 || l.block == kBlock) return {};
    return "is compiled for blocks of " + std::to_string(kBlock) + " threads, not " + std::to_string(l.block);
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const tl_backend_api* tl_backend_entry(uint32_t abi_version) {
  return tl::gpu::Backend<Hip>::entry(abi_version);
}
