// SPDX-License-Identifier: Apache-2.0
// The CUDA backend (libtensorlisp-cuda.so): NVIDIA GPUs through the CUDA Driver API, loaded
// at run time with dlopen("libcuda.so.1"), so the project builds and runs where there is no
// driver; asking for this backend there is a clear error. Kernels arrive as PTX from the
// JIT's NVPTX code generator and are loaded with cuModuleLoadDataEx (the driver compiles
// them for the device); launches go on one stream, copies too, so they run in order. What it
// shares with the HIP backend is in ../common/gpu_backend.h; this file says what differs.
//
// Options (key=value words): device=N (the ordinal, default 0), block=N (threads per block,
// default 256; a launch may ask for another, as the JIT's tuner does). Kernels are timed
// with events on the stream. TENSORLISP_LIBCUDA names another driver library (the tests use a fake one).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "../common/gpu_backend.h"
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
constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMultiprocessors = 16;
constexpr int kAttrCcMajor = 75;
constexpr int kAttrCcMinor = 76;
constexpr int kJitInfoLog = 3, kJitInfoLogSize = 4, kJitErrorLog = 5, kJitErrorLogSize = 6;
constexpr unsigned kStreamNonBlocking = 1;

// The driver's functions, X(slot, symbol, result, parameters), resolved by name in this
// order (the _v2 names are those cuda.h maps to). cuEventElapsedTime_v2 came with CUDA 12.8;
// older drivers have only the first.
#define TL_CUDA_ENTRY_POINTS(X)                                                                                      \
  X(init, "cuInit", CUresult, (unsigned))                                                                            \
  X(driver_get_version, "cuDriverGetVersion", CUresult, (int*))                                                      \
  X(device_get_count, "cuDeviceGetCount", CUresult, (int*))                                                          \
  X(device_get, "cuDeviceGet", CUresult, (CUdevice*, int))                                                           \
  X(device_get_name, "cuDeviceGetName", CUresult, (char*, int, CUdevice))                                            \
  X(device_get_attribute, "cuDeviceGetAttribute", CUresult, (int*, int, CUdevice))                                   \
  X(device_total_mem, "cuDeviceTotalMem_v2", CUresult, (std::size_t*, CUdevice))                                     \
  X(primary_ctx_retain, "cuDevicePrimaryCtxRetain", CUresult, (CUcontext*, CUdevice))                                \
  X(primary_ctx_release, "cuDevicePrimaryCtxRelease_v2", CUresult, (CUdevice))                                       \
  X(ctx_set_current, "cuCtxSetCurrent", CUresult, (CUcontext))                                                       \
  X(stream_create, "cuStreamCreate", CUresult, (CUstream*, unsigned))                                                \
  X(stream_destroy, "cuStreamDestroy_v2", CUresult, (CUstream))                                                      \
  X(stream_synchronize, "cuStreamSynchronize", CUresult, (CUstream))                                                 \
  X(mem_alloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr*, std::size_t))                                               \
  X(mem_free, "cuMemFree_v2", CUresult, (CUdeviceptr))                                                               \
  X(memcpy_htod_async, "cuMemcpyHtoDAsync_v2", CUresult, (CUdeviceptr, const void*, std::size_t, CUstream))          \
  X(memcpy_dtoh_async, "cuMemcpyDtoHAsync_v2", CUresult, (void*, CUdeviceptr, std::size_t, CUstream))                \
  X(module_load_data_ex, "cuModuleLoadDataEx", CUresult, (CUmodule*, const void*, unsigned, int*, void**))           \
  X(module_get_function, "cuModuleGetFunction", CUresult, (CUfunction*, CUmodule, const char*))                      \
  X(module_unload, "cuModuleUnload", CUresult, (CUmodule))                                                           \
  X(launch_kernel, "cuLaunchKernel", CUresult,                                                                       \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**))    \
  X(event_create, "cuEventCreate", CUresult, (CUevent*, unsigned))                                                   \
  X(event_record, "cuEventRecord", CUresult, (CUevent, CUstream))                                                    \
  X(event_synchronize, "cuEventSynchronize", CUresult, (CUevent))                                                    \
  X(event_destroy, "cuEventDestroy_v2", CUresult, (CUevent))                                                         \
  X(event_elapsed_time, lib.has("cuEventElapsedTime_v2") ? "cuEventElapsedTime_v2" : "cuEventElapsedTime", CUresult, \
    (float*, CUevent, CUevent))                                                                                      \
  X(get_error_name, "cuGetErrorName", CUresult, (CUresult, const char**))                                            \
  X(get_error_string, "cuGetErrorString", CUresult, (CUresult, const char**))

struct Cuda;
using Context = tl::gpu::Context<Cuda>;

// What the CUDA driver does its own way; see gpu_backend.h for each member's part.
struct Cuda {
  static constexpr const char* kName = "cuda";
  static constexpr const char* kLibraryEnv = "TENSORLISP_LIBCUDA";
  static constexpr const char* kLibrary = "libcuda.so.1";
  static constexpr const char* kLibraryFallback = nullptr;
  static constexpr const char* kDriverNoun = "NVIDIA driver";
  static constexpr const char* kLacksHint = " (a CUDA 11 or newer driver is needed)";
  static constexpr const char* kOptions = "block=N with N a multiple of 32 up to 1024";
  static constexpr const char* kAllocCall = "cuMemAlloc";
  static constexpr const char* kModuleNoun = "module";

  using Result = CUresult;
  static constexpr Result kSuccess = 0;
  using DevicePtr = CUdeviceptr;
  using Stream = CUstream;
  using Event = CUevent;
  using Module = CUmodule;
  using Function = CUfunction;

  struct Entries {
    TL_CUDA_ENTRY_POINTS(TL_GPU_ENTRY_FIELD)
    void resolve(tl::gpu::DriverLibrary& lib) { TL_CUDA_ENTRY_POINTS(TL_GPU_ENTRY_RESOLVE) }
  };

  // The device, its primary context and what the launches need to know of it.
  struct State {
    CUdevice device = 0;
    CUcontext ctx = nullptr;
    unsigned block = 256;
    int cc_major = 0, cc_minor = 0, max_threads = 1024, multiprocessors = 0;
  };

  // "CUDA_ERROR_X (n): description" for a driver result.
  static std::string describe(const Entries& d, CUresult r) {
    const char* name = nullptr;
    const char* text = nullptr;
    if (d.get_error_name == nullptr || d.get_error_name(r, &name) != kSuccess) name = nullptr;
    if (d.get_error_string == nullptr || d.get_error_string(r, &text) != kSuccess) text = nullptr;
    return tl::gpu::describe_status(name, "CUDA error", r, text);
  }

  static bool set_option(Context& c, const std::string& key, const std::string& v) {
    const long value = v.empty() ? -1 : std::strtol(v.c_str(), nullptr, 10);
    if (key != "block" || value < 32 || value > 1024 || value % 32 != 0) return false;
    c.state.block = static_cast<unsigned>(value);
    return true;
  }

  static std::string open(Context& c) {
    const Entries& d = c.d;
    State& s = c.state;
    auto failed = [&](const char* what, CUresult r) { return std::string(what) + ": " + describe(d, r); };
    if (CUresult r = d.init(0); r != kSuccess) return failed("cannot initialize the driver", r);
    int count = 0;
    if (CUresult r = d.device_get_count(&count); r != kSuccess) return failed("cannot count devices", r);
    if (count == 0) return "the NVIDIA driver is installed but sees no GPU";
    if (c.ordinal >= count) {
      return "no device " + std::to_string(c.ordinal) + " (this machine has " + std::to_string(count) + ": device=0" +
             (count > 1 ? " to device=" + std::to_string(count - 1) : std::string()) + ")";
    }
    if (CUresult r = d.device_get(&s.device, c.ordinal); r != kSuccess) return failed("cannot open device", r);
    d.device_get_name(c.name, sizeof c.name, s.device);
    d.device_get_attribute(&s.cc_major, kAttrCcMajor, s.device);
    d.device_get_attribute(&s.cc_minor, kAttrCcMinor, s.device);
    d.device_get_attribute(&s.max_threads, kAttrMaxThreadsPerBlock, s.device);
    d.device_get_attribute(&s.multiprocessors, kAttrMultiprocessors, s.device);
    d.device_total_mem(&c.memory, s.device);
    if (s.block > static_cast<unsigned>(s.max_threads)) s.block = static_cast<unsigned>(s.max_threads);
    if (CUresult r = d.primary_ctx_retain(&s.ctx, s.device); r != kSuccess) return failed("cannot create a context", r);
    if (CUresult r = d.ctx_set_current(s.ctx); r != kSuccess) return failed("cannot make the context current", r);
    if (CUresult r = d.stream_create(&c.stream, kStreamNonBlocking); r != kSuccess) {
      return failed("cannot create a stream", r);
    }
    return {};
  }

  static void close(Context& c) {
    if (c.state.ctx == nullptr) return;
    c.d.ctx_set_current(c.state.ctx);
    if (c.stream != nullptr) c.d.stream_destroy(c.stream);
    c.d.primary_ctx_release(c.state.device);
  }

  static CUresult make_current(Context& c) { return c.d.ctx_set_current(c.state.ctx); }
  static std::string current_failure(const Context&) { return "cannot make the context current"; }

  static void device_info(const Context& c, tl_device_info& out) {
    const State& s = c.state;
    std::snprintf(out.name, sizeof out.name, "%.100s (sm_%d%d)", c.name, s.cc_major, s.cc_minor);
    out.compute_units = s.multiprocessors;
    // PTX for the device's compute capability, up to sm_80: LLVM 14 emits no newer, and the
    // driver compiles sm_80 PTX for later GPUs (sm_86, sm_89, sm_90).
    int cc = s.cc_major * 10 + s.cc_minor;
    if (cc > 80) cc = 80;
    std::snprintf(out.target, sizeof out.target, "nvptx:sm_%d", cc);
  }

  // PTX, with the driver's compile log in the message when it refuses it.
  static std::string load_module(Context& c, const void* code, std::size_t code_size, CUmodule& module) {
    std::string ptx(static_cast<const char*>(code), code_size);  // NUL-terminated, as the driver wants
    std::vector<char> info(8192, 0), error(8192, 0);
    int keys[] = {kJitInfoLog, kJitInfoLogSize, kJitErrorLog, kJitErrorLogSize};
    void* values[] = {info.data(), reinterpret_cast<void*>(info.size()), error.data(),
                      reinterpret_cast<void*>(error.size())};
    CUresult r = c.d.module_load_data_ex(&module, ptx.c_str(), 4, keys, values);
    if (r == kSuccess) return {};
    return "the driver cannot load its PTX: " + describe(c.d, r) +
           (error[0] ? std::string("\n") + error.data() : std::string());
  }

  static CUresult create_event(const Entries& d, CUevent* e) { return d.event_create(e, 0); }

  // The launch's block when it asks for one (up to the device's limit), else block=N's.
  static std::string pick_block(const Context& c, const tl_launch& l, unsigned& block) {
    const State& s = c.state;
    block = l.block > 0 ? static_cast<unsigned>(std::min<std::int64_t>(l.block, s.max_threads)) : s.block;
    return {};
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const tl_backend_api* tl_backend_entry(uint32_t abi_version) {
  return tl::gpu::Backend<Cuda>::entry(abi_version);
}
