// SPDX-License-Identifier: Apache-2.0
// The core the GPU backends (CUDA, HIP) share: the backend table over one device, one stream,
// driver memory, modules, launches and events, written once against a traits struct `Gpu`
// that says only what differs between drivers (cuda_backend.cpp, hip_backend.cpp).
//
// A traits struct gives:
//   kName                    the backend's name, which starts each of its messages ("cuda")
//   kLibraryEnv, kLibrary    the variable naming another driver library, and the usual one
//   kLibraryFallback         where else to look when no library was named, or nullptr
//   kDriverNoun, kLacksHint  "no <noun> here (...)"; what follows "<library> lacks <symbols>"
//   kOptions                 its options after device=N, for the bad-option message
//   kAllocCall, kModuleNoun  the driver's allocation call and its word for a code object
//   Result, kSuccess         the driver's status type and its success value
//   DevicePtr, Stream, Event, Module, Function   the driver's handle types
//   Entries                  the driver's entry points (TL_GPU_ENTRY_FIELD) with resolve(lib)
//                            (TL_GPU_ENTRY_RESOLVE), including the slots this core calls:
//                            mem_alloc, mem_free, memcpy_htod_async, memcpy_dtoh_async,
//                            stream_synchronize, module_get_function, module_unload,
//                            launch_kernel, event_record, event_synchronize,
//                            event_elapsed_time, event_destroy
//   State                    what else the backend keeps per context
// and static functions over a Context<Gpu>:
//   describe(entries, r)            "NAME (code): text" for a driver status
//   set_option(c, key, value)       takes an option other than device=N, or says false
//   open(c)                         opens the device and the stream: "" or why not
//   close(c)                        releases what open got (also after a partial open)
//   make_current(c), current_failure(c)   binds the device to this thread; what failed
//   device_info(c, out)             the name, compute units and target of tl_device_info
//   load_module(c, code, size, m)   loads a code object: "" or why not
//   create_event(entries, e)        a new event
//   pick_block(c, launch, block)    threads per block for a launch without groups: "" or
//                                   why it cannot run such blocks
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "driver_library.h"
#include "plugin_util.h"
#include "tensorlisp/backend.h"

// Expansions of a driver's entry-point list, whose entries read X(slot, symbol, result,
// parameters): a function pointer field, and its lookup in a DriverLibrary named `lib` (so
// `symbol` may be an expression that asks `lib`).
#define TL_GPU_ENTRY_FIELD(slot, symbol, result, parameters) result(*slot) parameters = nullptr;
#define TL_GPU_ENTRY_RESOLVE(slot, symbol, result, parameters) lib.resolve(slot, symbol);

namespace tl::gpu {

// One device context: the driver, the device's ordinal and properties, and the stream that
// every copy and launch goes on, so they run in order.
template <class Gpu>
struct Context {
  DriverLibrary lib;
  typename Gpu::Entries d;
  int ordinal = 0;  // device=N
  typename Gpu::Stream stream = nullptr;
  std::size_t memory = 0;
  char name[128] = {};
  typename Gpu::State state;

  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  // The backend's resources go before the driver library (a member, closed after this).
  ~Context() { Gpu::close(*this); }
};

// "NAME (code): text" for a driver status, from the driver's name and text for it (either may
// be null).
inline std::string describe_status(const char* name, const char* fallback_name, int code, const char* text) {
  return std::string(name != nullptr ? name : fallback_name) + " (" + std::to_string(code) + ")" +
         (text != nullptr && *text != 0 ? std::string(": ") + text : std::string());
}

// The backend table of the GPU backend `Gpu`.
template <class Gpu>
class Backend {
 public:
  using Ctx = Context<Gpu>;
  using Result = typename Gpu::Result;

  // What the library's tl_backend_entry returns.
  static const tl_backend_api* entry(std::uint32_t abi_version) {
    return abi_version == TL_BACKEND_ABI_VERSION ? &kApi : nullptr;
  }

 private:
  struct Kernel {
    typename Gpu::Module module = nullptr;
    typename Gpu::Function fn = nullptr;
    std::string name;
  };

  static Ctx& context(void* p) { return *static_cast<Ctx*>(p); }

  static void set_error(char* err, std::size_t size, const std::string& msg) {
    backend_util::set_error(err, size, std::string(Gpu::kName) + ": " + msg);
  }

  // "<what>: <the driver's description of r>"
  static std::string failed(const Ctx& c, const std::string& what, Result r) {
    return what + ": " + Gpu::describe(c.d, r);
  }

  // Binds the device to the calling thread; false (with the message) when it fails.
  static bool current(Ctx& c, char* err, std::size_t size) {
    Result r = Gpu::make_current(c);
    if (r == Gpu::kSuccess) return true;
    set_error(err, size, failed(c, Gpu::current_failure(c), r));
    return false;
  }

  // Loads the driver library named by the environment, or the usual one; "" or why not.
  static std::string load_driver(Ctx& c) {
    const char* env = std::getenv(Gpu::kLibraryEnv);
    const char* name = env != nullptr && *env != 0 ? env : Gpu::kLibrary;
    const char* fallback = env == nullptr ? Gpu::kLibraryFallback : nullptr;
    if (std::string why = c.lib.open(name, fallback); !why.empty()) {
      return std::string("no ") + Gpu::kDriverNoun + " here (" + why + ")";
    }
    c.d.resolve(c.lib);
    if (c.lib.missing().empty()) return {};
    std::string why = std::string(name) + " lacks " + c.lib.missing() + Gpu::kLacksHint;
    c.lib.close();
    return why;
  }

  static void* create(const char* options, char* err, std::size_t size) {
    auto c = std::make_unique<Ctx>();
    const bool ok = backend_util::for_each_option(
        options, [&](const std::string& word, const std::string& key, const std::string& value) {
          if (key == "device" && !value.empty() && std::strtol(value.c_str(), nullptr, 10) >= 0) {
            c->ordinal = static_cast<int>(std::strtol(value.c_str(), nullptr, 10));
            return true;
          }
          if (Gpu::set_option(*c, key, value)) return true;
          set_error(err, size, "bad option \"" + word + "\" (known: device=N, " + Gpu::kOptions + ")");
          return false;
        });
    if (!ok) return nullptr;
    std::string why = load_driver(*c);
    if (why.empty()) why = Gpu::open(*c);
    if (!why.empty()) {
      set_error(err, size, why);
      return nullptr;
    }
    return c.release();
  }

  static void destroy(void* p) { delete static_cast<Ctx*>(p); }

  static int device_info(void* p, tl_device_info* out, char*, std::size_t) {
    const Ctx& c = context(p);
    std::memset(out, 0, sizeof *out);
    out->memory_bytes = c.memory;
    out->host_memory = 0;
    Gpu::device_info(c, *out);
    return 0;
  }

  static void* alloc(void* p, std::size_t bytes, char* err, std::size_t size) {
    Ctx& c = context(p);
    if (!current(c, err, size)) return nullptr;
    typename Gpu::DevicePtr ptr{};
    if (Result r = c.d.mem_alloc(&ptr, std::max<std::size_t>(bytes, 1)); r != Gpu::kSuccess) {
      // Named after the call, without the backend's name.
      backend_util::set_error(
          err, size,
          std::string(Gpu::kAllocCall) + " of " + std::to_string(bytes) + " bytes: " + Gpu::describe(c.d, r));
      return nullptr;
    }
    return reinterpret_cast<void*>(ptr);
  }

  static void free_memory(void* p, void* ptr) {
    Ctx& c = context(p);
    if (Gpu::make_current(c) == Gpu::kSuccess) c.d.mem_free(device_ptr(ptr));
  }

  // A device pointer as the driver takes it (an integer for CUDA, a pointer for HIP).
  static typename Gpu::DevicePtr device_ptr(const void* ptr) {
    return reinterpret_cast<typename Gpu::DevicePtr>(const_cast<void*>(ptr));
  }

  static int copy_in(void* p, void* dst, const void* src, std::size_t bytes, char* err, std::size_t size) {
    Ctx& c = context(p);
    if (!current(c, err, size)) return 1;
    // HIP's copy takes the host pointer as void*; it only reads it.
    Result r = c.d.memcpy_htod_async(device_ptr(dst), const_cast<void*>(src), bytes, c.stream);
    // The host memory may go as soon as this returns.
    if (r == Gpu::kSuccess) r = c.d.stream_synchronize(c.stream);
    if (r == Gpu::kSuccess) return 0;
    set_error(err, size, failed(c, "copying " + std::to_string(bytes) + " bytes to the device", r));
    return 1;
  }

  static int copy_out(void* p, void* dst, const void* src, std::size_t bytes, char* err, std::size_t size) {
    Ctx& c = context(p);
    if (!current(c, err, size)) return 1;
    Result r = c.d.memcpy_dtoh_async(dst, device_ptr(src), bytes, c.stream);
    if (r == Gpu::kSuccess) r = c.d.stream_synchronize(c.stream);
    if (r == Gpu::kSuccess) return 0;
    // A kernel that faulted earlier reports here, at the first synchronization.
    set_error(err, size, failed(c, "copying " + std::to_string(bytes) + " bytes from the device", r));
    return 1;
  }

  static void* compile(void* p, const void* code, std::size_t code_size, const char* entry, char* err,
                       std::size_t size) {
    Ctx& c = context(p);
    if (!current(c, err, size)) return nullptr;
    auto k = std::make_unique<Kernel>();
    k->name = entry;
    if (std::string why = Gpu::load_module(c, code, code_size, k->module); !why.empty()) {
      set_error(err, size, "kernel " + k->name + ": " + why);
      return nullptr;
    }
    if (Result r = c.d.module_get_function(&k->fn, k->module, entry); r != Gpu::kSuccess) {
      set_error(err, size, failed(c, "kernel " + k->name + " is not in its " + Gpu::kModuleNoun, r));
      c.d.module_unload(k->module);
      return nullptr;
    }
    return k.release();
  }

  static void release_kernel(void* p, void* kp) {
    Ctx& c = context(p);
    std::unique_ptr<Kernel> k(static_cast<Kernel*>(kp));
    if (Gpu::make_current(c) == Gpu::kSuccess) c.d.module_unload(k->module);
  }

  // Kernel parameters as the JIT's entries take them (backend.h): the buffer pointers, the
  // vars, then begin and end; a grid of blocks covering count threads (in several launches
  // when it needs more blocks than a grid may have).
  static int launch(void* p, void* kp, void* const* buffers, std::size_t buffer_count, const std::int64_t* vars,
                    std::size_t var_count, const tl_launch* l, char* err, std::size_t size) {
    Ctx& c = context(p);
    const Kernel& k = *static_cast<Kernel*>(kp);
    if (!current(c, err, size)) return 1;
    if (l->count <= 0) return 0;
    // Device pointers are passed as DevicePtr values, the size of a pointer here.
    static_assert(sizeof(typename Gpu::DevicePtr) == sizeof(void*));
    unsigned block = 0;
    if (std::string why = Gpu::pick_block(c, *l, block); !why.empty()) {
      set_error(err, size, "kernel " + k.name + " " + why);
      return 1;
    }
    return backend_util::launch_grid(
        buffers, buffer_count, vars, var_count, *l, block, [&](unsigned blocks, unsigned threads, void** params) {
          Result r = c.d.launch_kernel(k.fn, blocks, 1, 1, threads, 1, 1, 0, c.stream, params, nullptr);
          if (r == Gpu::kSuccess) return 0;
          set_error(err, size,
                    failed(c,
                           "launching kernel " + k.name + " (" + std::to_string(blocks) + " blocks of " +
                               std::to_string(threads) + " threads)",
                           r));
          return 1;
        });
  }

  static int synchronize(void* p, char* err, std::size_t size) {
    Ctx& c = context(p);
    if (!current(c, err, size)) return 1;
    if (Result r = c.d.stream_synchronize(c.stream); r != Gpu::kSuccess) {
      set_error(err, size, failed(c, "a kernel failed", r));
      return 1;
    }
    return 0;
  }

  // Events on the launch stream: the device's own clock, without the host's launch overhead.
  static void* record_event(void* p, char* err, std::size_t size) {
    Ctx& c = context(p);
    if (!current(c, err, size)) return nullptr;
    typename Gpu::Event e = nullptr;
    Result r = Gpu::create_event(c.d, &e);
    if (r == Gpu::kSuccess) {
      r = c.d.event_record(e, c.stream);
      if (r == Gpu::kSuccess) return e;
      c.d.event_destroy(e);
    }
    set_error(err, size, failed(c, "recording an event", r));
    return nullptr;
  }

  static int event_seconds(void* p, void* start, void* end, double* seconds, char* err, std::size_t size) {
    using Event = typename Gpu::Event;
    Ctx& c = context(p);
    if (!current(c, err, size)) return 1;
    if (Result r = c.d.event_synchronize(static_cast<Event>(end)); r != Gpu::kSuccess) {
      // A kernel before the event faulted.
      set_error(err, size, failed(c, "a kernel failed", r));
      return 1;
    }
    float ms = 0;
    if (Result r = c.d.event_elapsed_time(&ms, static_cast<Event>(start), static_cast<Event>(end));
        r != Gpu::kSuccess) {
      set_error(err, size, failed(c, "timing kernels", r));
      return 1;
    }
    *seconds = ms * 1e-3;
    return 0;
  }

  static void release_event(void* p, void* e) {
    Ctx& c = context(p);
    if (Gpu::make_current(c) == Gpu::kSuccess) c.d.event_destroy(static_cast<typename Gpu::Event>(e));
  }

  static void* find_extern(void*, const char* name, char* err, std::size_t size) {
    set_error(err, size,
              std::string("no external kernel named \"") + name + "\" (the " + Gpu::kName + " backend has none yet)");
    return nullptr;
  }

  static constexpr tl_backend_api kApi = {
      .abi_version = TL_BACKEND_ABI_VERSION,
      .struct_size = sizeof(tl_backend_api),
      .name = Gpu::kName,
      .create = create,
      .destroy = destroy,
      .device_info = device_info,
      .alloc = alloc,
      .free = free_memory,
      .copy_in = copy_in,
      .copy_out = copy_out,
      .compile = compile,
      .release_kernel = release_kernel,
      .launch = launch,
      .synchronize = synchronize,
      .find_extern = find_extern,
      .record_event = record_event,
      .event_seconds = event_seconds,
      .release_event = release_event,
      .set_cancel = nullptr,  // launches are queued and return at once; Ctrl-C lands between them
  };
};

}  // namespace tl::gpu
