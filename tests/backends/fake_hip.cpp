// SPDX-License-Identifier: Apache-2.0
// A stand-in for ROCm's HIP runtime library (libamdhip64.so) for testing the HIP backend on
// machines without an AMD GPU: one fake device with 4 MiB of host memory. Modules must be
// AMDGPU code objects (64-bit ELF for EM_AMDGPU) whose dynamic symbols include the kernel's
// descriptor (NAME.kd), from which the kernel's argument size is read; launches are checked,
// not run: the arguments must fill that size, its buffers must be fake device memory and
// its last two (begin, end) must be covered by the grid. A launch that passes returns
// hipErrorNotSupported with the message "checked, not run"; one that fails returns
// hipErrorInvalidValue with the details in hipGetErrorString.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

constexpr int kSuccess = 0, kInvalidValue = 1, kOutOfMemory = 2, kInvalidDevice = 101, kInvalidImage = 200,
              kNotFound = 500, kNotSupported = 801;
constexpr std::size_t kMemory = 4u << 20;
std::map<std::uintptr_t, std::size_t> g_allocations;
std::size_t g_used = 0;
std::string g_last_problem;
int g_stream;
std::int64_t g_launches = 0;

struct Function {
  std::string name;
  std::uint32_t kernarg_bytes = 0;  // from the kernel descriptor
};
struct Module {
  std::map<std::string, std::uint32_t> kernels;  // descriptor symbols (without .kd): argument bytes
  std::vector<std::unique_ptr<Function>> functions;
};
struct Event {
  std::int64_t launches = -1;
};

bool is_allocation(const void* p) { return g_allocations.count(reinterpret_cast<std::uintptr_t>(p)) != 0; }

template <class T>
T get(const unsigned char* p, std::size_t at) {
  T v;
  std::memcpy(&v, p + at, sizeof v);
  return v;
}

// The kernel descriptors of a code object: NAME.kd symbols of its dynamic symbol table, with
// the kernarg size (a descriptor's bytes 8 to 11). False when it is not an AMDGPU code object.
bool read_code_object(const unsigned char* elf, Module& m) {
  constexpr std::uint16_t kEmAmdgpu = 224;
  if (std::memcmp(elf, "\x7f" "ELF", 4) != 0 || elf[4] != 2 || get<std::uint16_t>(elf, 18) != kEmAmdgpu) return false;
  const auto shoff = get<std::uint64_t>(elf, 0x28);
  const auto shentsize = get<std::uint16_t>(elf, 0x3a), shnum = get<std::uint16_t>(elf, 0x3c);
  struct Section {
    std::uint32_t type, link;
    std::uint64_t addr, offset, size;
  };
  std::vector<Section> sections;
  for (std::uint16_t i = 0; i < shnum; ++i) {
    const std::size_t at = shoff + static_cast<std::size_t>(i) * shentsize;
    sections.push_back({get<std::uint32_t>(elf, at + 4), get<std::uint32_t>(elf, at + 40), get<std::uint64_t>(elf, at + 16),
                        get<std::uint64_t>(elf, at + 24), get<std::uint64_t>(elf, at + 32)});
  }
  constexpr std::uint32_t kDynsym = 11;
  for (const Section& s : sections) {
    if (s.type != kDynsym || s.link >= sections.size()) continue;
    const Section& names = sections[s.link];
    for (std::uint64_t at = s.offset + 24; at + 24 <= s.offset + s.size; at += 24) {  // past the null symbol
      const char* name = reinterpret_cast<const char*>(elf + names.offset + get<std::uint32_t>(elf, at));
      const auto value = get<std::uint64_t>(elf, at + 8);
      const std::string n = name;
      if (n.size() < 4 || n.compare(n.size() - 3, 3, ".kd") != 0) continue;
      for (const Section& d : sections) {
        if (d.addr != 0 && value >= d.addr && value + 12 <= d.addr + d.size) {
          m.kernels[n.substr(0, n.size() - 3)] = get<std::uint32_t>(elf, d.offset + (value - d.addr) + 8);
        }
      }
    }
  }
  return true;
}

}  // namespace

extern "C" {

int hipInit(unsigned) { return kSuccess; }
int hipGetDeviceCount(int* n) {
  *n = 1;
  return kSuccess;
}
int hipSetDevice(int d) { return d == 0 ? kSuccess : kInvalidDevice; }
int hipDeviceGetName(char* name, int len, int) {
  std::snprintf(name, static_cast<std::size_t>(len), "TensorLisp fake AMD GPU");
  return kSuccess;
}
int hipDeviceTotalMem(std::size_t* bytes, int) {
  *bytes = kMemory;
  return kSuccess;
}
int hipStreamCreate(void** s) {
  *s = &g_stream;
  return kSuccess;
}
int hipStreamDestroy(void* s) { return s == &g_stream ? kSuccess : kInvalidValue; }
int hipStreamSynchronize(void* s) { return s == &g_stream ? kSuccess : kInvalidValue; }

int hipMalloc(void** p, std::size_t bytes) {
  if (g_used + bytes > kMemory) return kOutOfMemory;
  void* m = std::malloc(bytes);
  if (m == nullptr) return kOutOfMemory;
  g_allocations[reinterpret_cast<std::uintptr_t>(m)] = bytes;
  g_used += bytes;
  *p = m;
  return kSuccess;
}
int hipFree(void* p) {
  auto it = g_allocations.find(reinterpret_cast<std::uintptr_t>(p));
  if (it == g_allocations.end()) return kInvalidValue;
  g_used -= it->second;
  g_allocations.erase(it);
  std::free(p);
  return kSuccess;
}
int hipMemcpyHtoDAsync(void* dst, void* src, std::size_t bytes, void* stream) {
  if (!is_allocation(dst) || stream != &g_stream) return kInvalidValue;
  std::memcpy(dst, src, bytes);
  return kSuccess;
}
int hipMemcpyDtoHAsync(void* dst, void* src, std::size_t bytes, void* stream) {
  if (!is_allocation(src) || stream != &g_stream) return kInvalidValue;
  std::memcpy(dst, src, bytes);
  return kSuccess;
}

int hipModuleLoadData(void** module, const void* image) {
  auto m = std::make_unique<Module>();
  if (!read_code_object(static_cast<const unsigned char*>(image), *m)) {
    g_last_problem = "fake runtime: not an AMDGPU code object";
    return kInvalidImage;
  }
  *module = m.release();
  return kSuccess;
}
int hipModuleGetFunction(void** fn, void* module, const char* name) {
  auto* m = static_cast<Module*>(module);
  auto it = m->kernels.find(name);
  if (it == m->kernels.end()) return kNotFound;
  m->functions.push_back(std::make_unique<Function>(Function{name, it->second}));
  *fn = m->functions.back().get();
  return kSuccess;
}
int hipModuleUnload(void* module) {
  delete static_cast<Module*>(module);
  return kSuccess;
}

int hipModuleLaunchKernel(void* fp, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                          unsigned shared, void* stream, void** params, void** extra) {
  auto* f = static_cast<Function*>(fp);
  auto problem = [&](const std::string& what) {
    g_last_problem = "fake runtime: launch of " + f->name + ": " + what;
    return kInvalidValue;
  };
  if (stream != &g_stream || extra != nullptr || shared != 0 || gy != 1 || gz != 1 || by != 1 || bz != 1 || bx == 0 ||
      bx > 1024 || gx == 0) {
    return problem("unexpected grid, block or stream");
  }
  // Every argument of the JIT's kernels is 8 bytes: pointers, then int64 values; the last two
  // are begin and end.
  const int n = static_cast<int>(f->kernarg_bytes / 8);
  if (n < 2 || f->kernarg_bytes % 8 != 0) return problem("its descriptor's kernarg size is " + std::to_string(f->kernarg_bytes));
  const auto value = [&](int i) { return *static_cast<const std::int64_t*>(params[i]); };
  const std::int64_t begin = value(n - 2), end = value(n - 1);
  if (begin < 0 || end <= begin) return problem("begin and end make an empty range");
  if (static_cast<std::int64_t>(gx) * bx < end - begin) return problem("the grid does not cover begin..end");
  int pointers = 0;
  for (int i = 0; i < n - 2 && is_allocation(reinterpret_cast<const void*>(value(i))); ++i) ++pointers;
  if (pointers == 0) return problem("its first argument is not device memory");
  ++g_launches;
  g_last_problem = "fake runtime: launch of " + f->name + " checked (" + std::to_string(pointers) + " buffers, " +
                   std::to_string(n - 2 - pointers) + " sizes, " + std::to_string(end - begin) + " threads), not run";
  return kNotSupported;
}

// Events count the launches that reached the runtime: 1 ms per launch between two.
int hipEventCreate(void** e) {
  *e = new Event;
  return kSuccess;
}
int hipEventRecord(void* e, void* stream) {
  if (stream != &g_stream) return kInvalidValue;
  static_cast<Event*>(e)->launches = g_launches;
  return kSuccess;
}
int hipEventSynchronize(void* e) { return static_cast<Event*>(e)->launches < 0 ? kInvalidValue : kSuccess; }
int hipEventElapsedTime(float* ms, void* start, void* end) {
  const auto* a = static_cast<Event*>(start);
  const auto* b = static_cast<Event*>(end);
  if (a->launches < 0 || b->launches < 0) return kInvalidValue;
  *ms = static_cast<float>(b->launches - a->launches);
  return kSuccess;
}
int hipEventDestroy(void* e) {
  delete static_cast<Event*>(e);
  return kSuccess;
}

const char* hipGetErrorName(int e) {
  switch (e) {
    case kSuccess: return "hipSuccess";
    case kInvalidValue: return "hipErrorInvalidValue";
    case kOutOfMemory: return "hipErrorOutOfMemory";
    case kInvalidDevice: return "hipErrorInvalidDevice";
    case kInvalidImage: return "hipErrorInvalidImage";
    case kNotFound: return "hipErrorNotFound";
    case kNotSupported: return "hipErrorNotSupported";
    default: return "hipErrorUnknown";
  }
}
const char* hipGetErrorString(int e) {
  if (e == kInvalidValue || e == kNotSupported || e == kInvalidImage) return g_last_problem.c_str();
  return e == kOutOfMemory ? "out of memory" : "";
}

}  // extern "C"
