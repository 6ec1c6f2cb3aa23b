// SPDX-License-Identifier: Apache-2.0
// The CPU backend: object files linked in-process by LLVM's ORC JIT, kernels run on a
// thread pool, buffers are host memory (so the runtime passes its own pointers).
// (Over 800 lines: the pool, the in-kernel cancellation by signal and the ORC linking share
// the backend's state; the pool goes to a file of its own when a second host backend needs it.)
#include <dlfcn.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/TargetSelect.h>
#include <pthread.h>
#include <signal.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../src/support/fftw.h"
#include "../../src/support/lapack.h"
#include "../common/plugin_util.h"
#include "tensorlisp/backend.h"

#if defined(__SANITIZE_ADDRESS__)
#define TL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TL_ASAN 1
#endif
#endif
#ifdef TL_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

extern "C" const tl_backend_api* tl_cpu_backend_entry(uint32_t abi_version);

// The SIMT simulator's side of a simulated GPU kernel (SimCodegen in llvm_emit.h): what the
// kernel asks of the GPU. Defined below; the JIT links kernels against them.
extern "C" {
int64_t tl_sim_block();
int64_t tl_sim_thread();
int64_t tl_sim_block_dim();
void* tl_sim_shared();
void tl_sim_barrier();
int32_t tl_sim_shfl_xor(int32_t value, int32_t mask);
}

namespace {

using KernelFn = void (*)(void* const*, const int64_t*, int64_t, int64_t);

using tl::backend_util::set_error;

// A fixed set of worker threads running the parts of one launch at a time. Waking a sleeping
// thread costs tens of microseconds on a virtual machine, more than a small kernel runs, so
// both sides spin for a while (yielding the core) before they sleep: kernels launched back to
// back find the workers awake. Parts are claimed, not assigned: a worker the OS has not
// scheduled (a loaded machine) is not waited for; the caller and the workers that came take
// its parts, and once every part is claimed the launch is closed to latecomers.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    // The workers take none of the host's signals: Ctrl-C must reach the thread that
    // evaluates, where it also interrupts a blocked read.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    size_ = threads;
  }
  ~ThreadPool() {
    stop_ = true;
    publish();
    for (auto& t : workers_) t.join();
  }
  int size() const { return size_; }

  // Runs task(part) once for each part in [0, parts), parts <= size(), on the caller and the
  // workers that join in time; returns when every part has run.
  void run(int parts, const std::function<void(int)>& task) {
    if (parts <= 1) {
      task(0);
      return;
    }
    task_ = &task;
    parts_ = parts;
    next_part_.store(0);
    state_.store(kOpen);
    publish();
    run_parts();
    // No worker joins from here on; wait for those inside (they hold claimed parts or are
    // about to find none left).
    state_.fetch_and(~kOpen);
    wait_until([this] { return state_.load() == 0; }, done_sleepers_, done_cv_);
    task_ = nullptr;
  }

 private:
  // How long a thread spins before it sleeps.
  static constexpr std::chrono::microseconds kSpin{2000};
  // state_: kOpen while workers may join the current launch, plus how many are inside it.
  static constexpr std::uint32_t kOpen = 1u << 31;

  void run_parts() {
    for (int p = next_part_.fetch_add(1); p < parts_; p = next_part_.fetch_add(1)) (*task_)(p);
  }

  // Starts a new generation, waking the workers that sleep.
  void publish() {
    generation_.fetch_add(1);
    if (sleepers_.load() > 0) {
      std::lock_guard<std::mutex> lock(mu_);
      cv_.notify_all();
    }
  }

  // Spins until ready(), then sleeps on cv until it is (counted in `sleepers`, so the other
  // side knows to notify). Sequentially consistent atomics make the two checks see each other.
  template <typename Ready>
  void wait_until(Ready ready, std::atomic<int>& sleepers, std::condition_variable& cv) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; !ready(); ++i) {
      if ((i & 63) == 63 && std::chrono::steady_clock::now() - t0 > kSpin) {
        std::unique_lock<std::mutex> lock(mu_);
        sleepers.fetch_add(1);
        cv.wait(lock, ready);
        sleepers.fetch_sub(1);
        return;
      }
      std::this_thread::yield();
    }
  }

  // Enters the current launch if it is still open (task_ and parts_ are then its own until
  // this worker leaves: the caller waits for it).
  bool join() {
    std::uint32_t s = state_.load();
    while ((s & kOpen) != 0) {
      if (state_.compare_exchange_weak(s, s + 1)) return true;
    }
    return false;
  }

  void work() {
    std::uint64_t seen = 0;
    for (;;) {
      wait_until([&] { return generation_.load() != seen; }, sleepers_, cv_);
      seen = generation_.load();
      if (stop_) return;
      if (!join()) continue;
      run_parts();
      if (state_.fetch_sub(1) == 1 && done_sleepers_.load() > 0) {
        std::lock_guard<std::mutex> lock(mu_);
        done_cv_.notify_one();
      }
    }
  }

  std::vector<std::thread> workers_;
  int size_ = 1;
  std::mutex mu_;
  std::condition_variable cv_, done_cv_;
  std::atomic<int> sleepers_{0}, done_sleepers_{0};
  // Written by run() before the launch opens, read by the workers that join it.
  const std::function<void(int)>* task_ = nullptr;
  int parts_ = 0;
  std::atomic<int> next_part_{0};
  std::atomic<std::uint32_t> state_{0};
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> generation_{0};
};

int default_threads() {
  if (const char* env = std::getenv("TENSORLISP_THREADS")) {
    int n = std::atoi(env);
    if (n > 0) return n;
  }
  unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : static_cast<int>(n);
}

std::string cpu_name() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "CPU";
}

struct Context {
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<ThreadPool> pool;
  std::mutex jit_mu;
  std::uint64_t next_dylib = 0;
  // memory=device: behave as a device with its own memory (a GPU), so the JIT's copies,
  // memory pool and errors can be tested without one. Allocations are tracked, filled with
  // 0xff (NaN as floats) when made, and every buffer a launch gets must be one of them;
  // memory-limit=BYTES caps what can be allocated at once.
  bool device_memory = false;
  std::size_t memory_limit = 0;  // 0: none
  // sim=nvptx|amdgcn: kernels are GPU kernels (SimCodegen), run by the SIMT simulator with
  // blocks of sim_block threads (those without thread groups).
  std::string sim;
  unsigned sim_block = 32;
  std::size_t allocated = 0;
  std::map<const void*, std::size_t> allocations;
  std::mutex memory_mu;
  // The host's cancel function (set_cancel), asked between chunks of a launch.
  int (*cancelled)(void* user) = nullptr;
  void* cancel_user = nullptr;
  bool cancel_requested() const { return cancelled != nullptr && cancelled(cancel_user) != 0; }
};

// An external kernel: called once per launch on the whole buffers (it may thread itself).
// Returns an error message, or an empty string when it ran; sets `cancelled` when it stopped
// early because the host's cancel function said so.
using ExternFn = std::string (*)(const Context& ctx, void* const* buffers, std::size_t buffer_count, const int64_t* vars,
                                 std::size_t var_count, bool& cancelled);

struct Kernel {
  KernelFn fn = nullptr;
  ExternFn ext = nullptr;
  llvm::orc::JITDylib* dylib = nullptr;  // a compiled kernel's own library (its code)
  std::string lapack = {};               // a linear-algebra kernel of LAPACK's (support/lapack.h), by name
  std::string fftw = {};                 // a Fourier transform of FFTW's (support/fftw.h), by name
};

// --- external kernels ------------------------------------------------------------------------

// cblas_sgemm, from the first CBLAS library found at run time (OpenBLAS in Debian's
// libopenblas0; the reference libblas3 also exports it). Nothing is linked at build time.
using SgemmFn = void (*)(int layout, int trans_a, int trans_b, int m, int n, int k, float alpha, const float* a, int lda,
                         const float* b, int ldb, float beta, float* c, int ldc);

SgemmFn load_sgemm(std::string& why) {
  static SgemmFn fn = nullptr;
  static std::string error;
  static std::once_flag once;
  std::call_once(once, [] {
    // OpenBLAS starts its threads when it is loaded: like the pool's, they take no signals.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    struct Restore {
      sigset_t mask;
      ~Restore() { pthread_sigmask(SIG_SETMASK, &mask, nullptr); }
    } restore{old};
    for (const char* lib : {"libopenblas.so.0", "libcblas.so.3", "libblas.so.3"}) {
      void* h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) continue;
      if (auto* f = reinterpret_cast<SgemmFn>(dlsym(h, "cblas_sgemm"))) {
        fn = f;
        return;
      }
      dlclose(h);
    }
    error = "no CBLAS library with cblas_sgemm found (install libopenblas0 or libblas3)";
  });
  why = error;
  return fn;
}

// The buffers an external kernel was given, read from its vars: dtype, rank, sizes each.
struct ExternBuffer {
  int64_t dtype = -1;
  std::vector<int64_t> shape;
};

std::vector<ExternBuffer> extern_buffers(std::size_t count, const int64_t* vars, std::size_t var_count) {
  std::vector<ExternBuffer> out;
  std::size_t i = 0;
  for (std::size_t b = 0; b < count && i + 2 <= var_count; ++b) {
    ExternBuffer e;
    e.dtype = vars[i];
    const auto rank = static_cast<std::size_t>(vars[i + 1]);
    i += 2;
    if (i + rank > var_count) break;
    e.shape.assign(vars + i, vars + i + rank);
    i += rank;
    out.push_back(std::move(e));
  }
  return out;
}

std::string shape_text(const std::vector<int64_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? " " : "") + std::to_string(s[i]);
  return t + ")";
}

// When the host can cancel, a large sgemm runs as calls on square blocks of C of about this
// many multiply-adds (tens of milliseconds), so Ctrl-C stops it between two of them; blocks
// are at least kSgemmMinBlock wide, where packing the operands costs little next to the
// arithmetic.
constexpr int64_t kSgemmBlockWork = int64_t{1} << 31;
constexpr int64_t kSgemmMinBlock = 256;

// sgemm: f32 sources A (..., M, K, 1) and B (..., 1, K, N), the operands of a matmul as the
// matmul composite lays them out, and f32 output (..., M, 1, N) = A B per batch.
std::string extern_sgemm(const Context& ctx, void* const* buffers, std::size_t buffer_count, const int64_t* vars,
                         std::size_t var_count, bool& cancelled) {
  std::vector<ExternBuffer> b = extern_buffers(buffer_count, vars, var_count);
  if (b.size() != 3) return "sgemm takes two sources";
  const ExternBuffer &out = b[0], &a = b[1], &bb = b[2];
  const std::size_t r = a.shape.size();
  bool ok = out.dtype == TL_DTYPE_F32 && a.dtype == TL_DTYPE_F32 && bb.dtype == TL_DTYPE_F32 && r >= 3 &&
            bb.shape.size() == r && out.shape.size() == r;
  if (ok) {
    ok = a.shape[r - 1] == 1 && bb.shape[r - 3] == 1 && a.shape[r - 2] == bb.shape[r - 2] && out.shape[r - 3] == a.shape[r - 3] &&
         out.shape[r - 2] == 1 && out.shape[r - 1] == bb.shape[r - 1];
    for (std::size_t i = 0; ok && i + 3 < r; ++i) ok = a.shape[i] == bb.shape[i] && out.shape[i] == a.shape[i];
  }
  if (!ok) {
    return "sgemm needs f32 A (... M K 1) and B (... 1 K N) giving (... M 1 N), got A " + shape_text(a.shape) + ", B " +
           shape_text(bb.shape) + " giving " + shape_text(out.shape);
  }
  std::string why;
  SgemmFn sgemm = load_sgemm(why);
  if (sgemm == nullptr) return why;
  const int64_t m = a.shape[r - 3], k = a.shape[r - 2], n = bb.shape[r - 1];
  int64_t batch = 1;
  for (std::size_t i = 0; i + 3 < r; ++i) batch *= a.shape[i];
  const auto* pa = static_cast<const float*>(buffers[1]);
  const auto* pb = static_cast<const float*>(buffers[2]);
  auto* pc = static_cast<float*>(buffers[0]);
  int64_t side = std::max(m, n);
  if (ctx.cancelled != nullptr) {
    side = static_cast<int64_t>(std::sqrt(static_cast<double>(kSgemmBlockWork) / static_cast<double>(std::max<int64_t>(k, 1))));
    side = std::max(kSgemmMinBlock, side / 64 * 64);
  }
  for (int64_t i = 0; i < batch; ++i) {
    if (k == 0) {
      std::memset(pc + i * m * n, 0, static_cast<std::size_t>(m * n) * sizeof(float));
      continue;
    }
    for (int64_t r = 0; r < m; r += side) {
      for (int64_t c = 0; c < n; c += side) {
        if (ctx.cancel_requested()) {
          cancelled = true;
          return {};
        }
        // The block of this batch's C at rows [r, r + h), columns [c, c + w): those rows of A
        // times those columns of B. Row-major (101), neither operand transposed (111).
        const int64_t h = std::min(side, m - r), w = std::min(side, n - c);
        sgemm(101, 111, 111, static_cast<int>(h), static_cast<int>(w), static_cast<int>(k), 1.0f, pa + i * m * k + r * k,
              static_cast<int>(k), pb + i * k * n + c, static_cast<int>(n), 0.0f, pc + i * m * n + r * n + c,
              static_cast<int>(n));
      }
    }
  }
  return {};
}

// A linear-algebra kernel NAME (support/lapack.h): f32 or f64 sources, the output first.
std::string extern_lapack(const Context& ctx, const std::string& name, void* const* buffers, std::size_t buffer_count,
                          const int64_t* vars, std::size_t var_count, bool& cancelled, bool& input_error) {
  std::vector<ExternBuffer> b = extern_buffers(buffer_count, vars, var_count);
  if (b.size() != buffer_count || b.size() < 2)
    return name + ": the launch describes " + std::to_string(b.size()) + " buffers";
  std::vector<tl::lapack::Operand> srcs;
  std::vector<std::vector<int64_t>> shapes;
  for (std::size_t i = 1; i < b.size(); ++i) {
    if (b[i].dtype != TL_DTYPE_F32 && b[i].dtype != TL_DTYPE_F64) return name + ": the operands must be f32 or f64";
    srcs.push_back({b[i].dtype == TL_DTYPE_F64, b[i].shape, buffers[i]});
    shapes.push_back(b[i].shape);
  }
  std::string why;
  const std::vector<int64_t> want = tl::lapack::output_shape(name, shapes, why);
  if (!why.empty()) return why;
  if (want != b[0].shape || b[0].dtype != b[1].dtype) {
    return name + ": the output must be " + shape_text(want) + " of the operands' type, got " + shape_text(b[0].shape);
  }
  return tl::lapack::run(
      name, buffers[0], srcs, [&ctx] { return ctx.cancel_requested(); }, cancelled, input_error);
}

// A Fourier transform NAME (support/fftw.h): one f32 or f64 source, the output first.
std::string extern_fftw(const std::string& name, void* const* buffers, std::size_t buffer_count, const int64_t* vars,
                        std::size_t var_count) {
  std::vector<ExternBuffer> b = extern_buffers(buffer_count, vars, var_count);
  if (b.size() != buffer_count || b.size() != 2)
    return name + ": the launch describes " + std::to_string(b.size()) + " buffers";
  if (b[1].dtype != TL_DTYPE_F32 && b[1].dtype != TL_DTYPE_F64) return name + ": the operand must be f32 or f64";
  std::string why;
  const std::vector<int64_t> want = tl::fftw::output_shape(name, {b[1].shape}, why);
  if (!why.empty()) return why;
  if (want != b[0].shape || b[0].dtype != b[1].dtype) {
    return name + ": the output must be " + shape_text(want) + " of the operand's type, got " + shape_text(b[0].shape);
  }
  return tl::fftw::run(name, buffers[0], {{b[1].dtype == TL_DTYPE_F64, b[1].shape, buffers[1]}});
}

// --- the SIMT simulator ----------------------------------------------------------------------
//
// Runs GPU kernels (SimCodegen) as a GPU would, one block at a time per worker thread. A
// kernel without thread groups has independent threads: each runs to its end in turn. A
// group kernel's threads meet at barriers and exchange values by warp shuffles, so each runs
// as a fiber until it reaches one; when every thread of the block (or of the warp,
// for a shuffle) has arrived, they all go on. A barrier that some threads of the block never
// reach, or a shuffle that some lanes of a warp skip, is an error naming the kernel's block,
// as is a kernel that asks for them outside a group. Shared memory starts each block filled
// with 0xff bytes (NaN as floats), so reading a slot no thread wrote shows.

// A fiber's saved context. On x86-64 a switch saves the callee-saved registers on the
// stack and swaps stack pointers (tl_fiber_switch below), tens of cycles; elsewhere ucontext,
// whose swapcontext also makes a system call for the signal mask.
#if defined(__x86_64__)
struct FiberContext {
  void* sp = nullptr;
};
extern "C" void tl_fiber_switch(void** save_sp, void* load_sp);
// Saves rbp, rbx and r12-r15 on the running stack, stores the stack pointer in *save_sp, and
// resumes the context saved at load_sp. (The x87 control word and MXCSR are not saved: no
// kernel changes them.)
asm(R"(
  .text
  .p2align 4
  .type tl_fiber_switch,@function
tl_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size tl_fiber_switch, .-tl_fiber_switch
)");

// A context that starts entry() on `stack` (which must never return).
void context_init(FiberContext& c, char* stack, std::size_t size, void (*entry)()) {
  auto top = reinterpret_cast<std::uintptr_t>(stack + size) & ~std::uintptr_t{15};
  // r15..rbp (sp[0..5]), then the return address: entry, entered as if called (sp[7], its
  // return slot, is 16-byte aligned).
  auto* sp = reinterpret_cast<std::uint64_t*>(top) - 8;
  std::memset(sp, 0, 8 * sizeof *sp);
  sp[6] = reinterpret_cast<std::uint64_t>(entry);
  c.sp = sp;
}
void context_switch(FiberContext& from, FiberContext& to) { tl_fiber_switch(&from.sp, to.sp); }
#else
struct FiberContext {
  ucontext_t uc{};
};
void context_init(FiberContext& c, char* stack, std::size_t size, void (*entry)()) {
  getcontext(&c.uc);
  c.uc.uc_stack.ss_sp = stack;
  c.uc.uc_stack.ss_size = size;
  c.uc.uc_link = nullptr;
  makecontext(&c.uc, entry, 0);
}
void context_switch(FiberContext& from, FiberContext& to) { swapcontext(&from.uc, &to.uc); }
#endif

constexpr int kWarp = 32;
constexpr std::size_t kFiberStack = 64 << 10;
constexpr std::size_t kSharedBytes = 8 << 10;  // the most a kernel's combines use: 8 bytes per thread of 1024

struct Fiber {
  enum class State { Ready, Barrier, Shuffle, Done };
  FiberContext context;
  std::unique_ptr<char[]> stack;
  State state = State::Ready;
  int32_t value = 0, mask = 0, result = 0;  // a shuffle's
};

// One worker's simulation state: the block it runs, and its fibers.
struct SimThread {
  KernelFn fn = nullptr;
  void* const* buffers = nullptr;
  const int64_t* vars = nullptr;
  int64_t begin = 0, end = 0;
  int64_t block = 0, thread = 0, block_dim = 1;
  bool fibers_on = false;  // running a group kernel's block as fibers
  std::vector<Fiber> fibers;
  FiberContext scheduler;
  std::vector<unsigned char> shared = std::vector<unsigned char>(kSharedBytes);
  std::string error;  // the first misuse a kernel made (outside fibers)
#ifdef TL_ASAN
  const void* scheduler_stack = nullptr;
  std::size_t scheduler_stack_size = 0;
#endif
};

thread_local SimThread* t_sim = nullptr;

// Switches from the running context to `to`: a fiber's (whose stack is `stack`) or, when
// `stack` is null, the scheduler's; AddressSanitizer is told which stack is which. `dying`:
// the running fiber never resumes.
void sim_switch(FiberContext& from, FiberContext& to, const char* stack, bool dying = false) {
#ifdef TL_ASAN
  SimThread& s = *t_sim;
  void* fake = nullptr;
  if (stack != nullptr) {
    __sanitizer_start_switch_fiber(&fake, stack, kFiberStack);
  } else {
    __sanitizer_start_switch_fiber(dying ? nullptr : &fake, s.scheduler_stack, s.scheduler_stack_size);
  }
  context_switch(from, to);
  // Resumed. A fiber learns the scheduler's stack here (it is what it was resumed from).
  const void* bottom = nullptr;
  std::size_t size = 0;
  __sanitizer_finish_switch_fiber(fake, &bottom, &size);
  if (stack == nullptr) {
    s.scheduler_stack = bottom;
    s.scheduler_stack_size = size;
  }
#else
  (void)stack;
  (void)dying;
  context_switch(from, to);
#endif
}

void fiber_main() {
  SimThread& s = *t_sim;
#ifdef TL_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &s.scheduler_stack, &s.scheduler_stack_size);
#endif
  const auto i = static_cast<std::size_t>(s.thread);
  s.fn(s.buffers, s.vars, s.begin, s.end);
  s.fibers[i].state = Fiber::State::Done;
  sim_switch(s.fibers[i].context, s.scheduler, nullptr, true);
  std::abort();  // never resumed
}

// The running fiber waits in `state` until the scheduler resumes it.
void fiber_wait(Fiber::State state) {
  SimThread& s = *t_sim;
  Fiber& f = s.fibers[static_cast<std::size_t>(s.thread)];
  f.state = state;
  sim_switch(f.context, s.scheduler, nullptr);
}

// Runs block `block` of a group kernel with `threads` threads; returns an error or "".
std::string sim_group_block(SimThread& s, int64_t block, int64_t threads) {
  const auto n = static_cast<std::size_t>(threads);
  s.block = block;
  s.block_dim = threads;
  std::fill(s.shared.begin(), s.shared.end(), 0xff);
  if (s.fibers.size() < n) s.fibers.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    Fiber& f = s.fibers[i];
    if (!f.stack) f.stack = std::make_unique<char[]>(kFiberStack);
    context_init(f.context, f.stack.get(), kFiberStack, fiber_main);
    f.state = Fiber::State::Ready;
  }
  s.fibers_on = true;
  std::string error;
  auto where = [&] { return "block " + std::to_string(block) + " of " + std::to_string(threads) + " threads"; };
  for (;;) {
    for (std::size_t i = 0; i < n; ++i) {
      if (s.fibers[i].state != Fiber::State::Ready) continue;
      s.thread = static_cast<int64_t>(i);
      sim_switch(s.scheduler, s.fibers[i].context, s.fibers[i].stack.get());
    }
    // Every thread is done or waiting. Warps whose lanes all wait at a shuffle exchange.
    bool moved = false;
    for (std::size_t w = 0; w < n && error.empty(); w += kWarp) {
      const std::size_t lanes = std::min<std::size_t>(kWarp, n - w);
      std::size_t at = 0;
      for (std::size_t l = 0; l < lanes; ++l) at += s.fibers[w + l].state == Fiber::State::Shuffle;
      if (at == 0) continue;
      if (at != kWarp) {
        error = "a warp shuffle that " + std::to_string(kWarp - at) + " lanes of warp " + std::to_string(w / kWarp) +
                " did not reach (" + where() + ")";
        break;
      }
      for (std::size_t l = 0; l < lanes; ++l) {
        Fiber& f = s.fibers[w + l];
        if (f.mask != s.fibers[w].mask || f.mask < 0 || f.mask >= kWarp) {
          error = "a warp shuffle with differing or invalid lane masks (" + where() + ")";
          break;
        }
        f.result = s.fibers[w + (l ^ static_cast<std::size_t>(f.mask))].value;
      }
      for (std::size_t l = 0; l < lanes; ++l) s.fibers[w + l].state = Fiber::State::Ready;
      moved = true;
    }
    if (!error.empty()) break;
    if (moved) continue;
    std::size_t waiting = 0, done = 0;
    for (std::size_t i = 0; i < n; ++i) {
      waiting += s.fibers[i].state == Fiber::State::Barrier;
      done += s.fibers[i].state == Fiber::State::Done;
    }
    if (done == n) break;
    if (waiting != n) {
      error = "a barrier that " + std::to_string(n - waiting) + " of the threads did not reach (" + where() + ")";
      break;
    }
    for (std::size_t i = 0; i < n; ++i) s.fibers[i].state = Fiber::State::Ready;
  }
  s.fibers_on = false;
  return error;
}

// Runs a simulated GPU launch on the worker threads; returns an error or "". Sets `cancelled`
// when it stopped between two blocks because the host's cancel function said so.
std::string sim_launch(struct Context* ctx, KernelFn fn, void* const* buffers, const int64_t* vars, const tl_launch& l,
                       bool& cancelled);

void* cpu_create(const char* options, char* err, std::size_t err_size) {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  int threads = default_threads();
  bool device_memory = false;
  std::size_t memory_limit = 0;
  std::string sim;
  unsigned sim_block = 32;
  const bool ok = tl::backend_util::for_each_option(options, [&](const std::string& word, const std::string& key, const std::string& value) {
    if (key == "threads") {
      int n = std::atoi(value.c_str());
      if (n <= 0) {
        set_error(err, err_size, "cpu: threads must be a positive integer in \"" + word + "\"");
        return false;
      }
      threads = n;
    } else if (key == "memory" && (value == "host" || value == "device")) {
      device_memory = value == "device";
    } else if (key == "memory-limit" && !value.empty() && std::strtoll(value.c_str(), nullptr, 10) > 0) {
      memory_limit = static_cast<std::size_t>(std::strtoll(value.c_str(), nullptr, 10));
    } else if (key == "sim" && (value == "nvptx" || value == "amdgcn")) {
      sim = value;
    } else if (key == "block" && std::atoi(value.c_str()) > 0 && std::atoi(value.c_str()) <= 1024) {
      sim_block = static_cast<unsigned>(std::atoi(value.c_str()));
    } else {
      set_error(err, err_size, "cpu: unknown option \"" + word +
                                   "\" (known: threads=N, memory=host|device, memory-limit=BYTES, sim=nvptx|amdgcn, block=N)");
      return false;
    }
    return true;
  });
  if (!ok) return nullptr;
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    set_error(err, err_size, "cpu: cannot start the LLVM JIT: " + llvm::toString(jit.takeError()));
    return nullptr;
  }
  auto gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess((*jit)->getDataLayout().getGlobalPrefix());
  if (!gen) {
    set_error(err, err_size, "cpu: cannot resolve host symbols: " + llvm::toString(gen.takeError()));
    return nullptr;
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*gen));
  // The simulator's functions, for simulated GPU kernels.
  llvm::orc::SymbolMap sim_symbols;
  auto define = [&](const char* name, auto* fn) {
    sim_symbols[(*jit)->mangleAndIntern(name)] =
        llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(fn), llvm::JITSymbolFlags::Exported);
  };
  define("tl_sim_block", &tl_sim_block);
  define("tl_sim_thread", &tl_sim_thread);
  define("tl_sim_block_dim", &tl_sim_block_dim);
  define("tl_sim_shared", &tl_sim_shared);
  define("tl_sim_barrier", &tl_sim_barrier);
  define("tl_sim_shfl_xor", &tl_sim_shfl_xor);
  if (auto e = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(sim_symbols)))) {
    set_error(err, err_size, "cpu: cannot define the simulator's symbols: " + llvm::toString(std::move(e)));
    return nullptr;
  }
  auto* ctx = new Context;
  ctx->jit = std::move(*jit);
  ctx->pool = std::make_unique<ThreadPool>(threads);
  ctx->device_memory = device_memory || !sim.empty();  // a simulated GPU has its own memory
  ctx->memory_limit = memory_limit;
  ctx->sim = sim;
  ctx->sim_block = sim_block;
  return ctx;
}

void cpu_destroy(void* c) { delete static_cast<Context*>(c); }

int cpu_device_info(void* c, tl_device_info* out, char*, std::size_t) {
  auto* ctx = static_cast<Context*>(c);
  std::memset(out, 0, sizeof *out);
  std::string name = cpu_name() + " (" + std::to_string(ctx->pool->size()) + " threads)";
  if (!ctx->sim.empty()) name = "SIMT simulator (" + ctx->sim + ") on " + name;
  std::snprintf(out->name, sizeof out->name, "%s", name.c_str());
  long pages = sysconf(_SC_PHYS_PAGES);
  long page = sysconf(_SC_PAGE_SIZE);
  out->memory_bytes = pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
  out->compute_units = ctx->pool->size();
  out->host_memory = ctx->device_memory ? 0 : 1;
  if (ctx->memory_limit > 0) out->memory_bytes = ctx->memory_limit;
  std::snprintf(out->target, sizeof out->target, "%s", ctx->sim.empty() ? "host" : ("sim:" + ctx->sim).c_str());
  return 0;
}

void* cpu_alloc(void* c, std::size_t bytes, char* err, std::size_t err_size) {
  auto* ctx = static_cast<Context*>(c);
  std::lock_guard<std::mutex> lock(ctx->memory_mu);
  if (ctx->memory_limit > 0 && ctx->allocated + bytes > ctx->memory_limit) {
    set_error(err, err_size, "cpu: memory-limit of " + std::to_string(ctx->memory_limit) + " bytes reached");
    return nullptr;
  }
  void* p = std::aligned_alloc(64, std::max<std::size_t>(64, (bytes + 63) / 64 * 64));
  if (p == nullptr) {
    set_error(err, err_size, "cpu: out of memory allocating " + std::to_string(bytes) + " bytes");
    return nullptr;
  }
  if (ctx->device_memory) std::memset(p, 0xff, bytes);
  ctx->allocations[p] = bytes;
  ctx->allocated += bytes;
  return p;
}

void cpu_free(void* c, void* p) {
  auto* ctx = static_cast<Context*>(c);
  {
    std::lock_guard<std::mutex> lock(ctx->memory_mu);
    if (auto it = ctx->allocations.find(p); it != ctx->allocations.end()) {
      ctx->allocated -= it->second;
      ctx->allocations.erase(it);
    }
  }
  std::free(p);
}

// With memory=device, every buffer of a launch must be device memory (an allocation).
std::string check_device_pointers(Context* ctx, void* const* buffers, std::size_t count) {
  if (!ctx->device_memory) return {};
  std::lock_guard<std::mutex> lock(ctx->memory_mu);
  for (std::size_t i = 0; i < count; ++i) {
    if (buffers[i] != nullptr && !ctx->allocations.count(buffers[i])) {
      return "cpu (memory=device): buffer " + std::to_string(i) + " of a launch is not device memory";
    }
  }
  return {};
}

int cpu_copy(void*, void* dst, const void* src, std::size_t bytes, char*, std::size_t) {
  if (bytes != 0) std::memcpy(dst, src, bytes);
  return 0;
}

void* cpu_compile(void* c, const void* code, std::size_t size, const char* entry, char* err, std::size_t err_size) {
  auto* ctx = static_cast<Context*>(c);
  std::lock_guard<std::mutex> lock(ctx->jit_mu);
  // Each object goes into its own library, so kernels may share names across compiles.
  auto& es = ctx->jit->getExecutionSession();
  auto dylib = es.createJITDylib("k" + std::to_string(ctx->next_dylib++));
  if (!dylib) {
    set_error(err, err_size, "cpu: " + llvm::toString(dylib.takeError()));
    return nullptr;
  }
  dylib->addToLinkOrder(ctx->jit->getMainJITDylib());
  auto buf = llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(static_cast<const char*>(code), size), entry);
  if (auto e = ctx->jit->addObjectFile(*dylib, std::move(buf))) {
    set_error(err, err_size, "cpu: cannot load the kernel object: " + llvm::toString(std::move(e)));
    return nullptr;
  }
  auto sym = ctx->jit->lookup(*dylib, entry);
  if (!sym) {
    set_error(err, err_size, "cpu: kernel " + std::string(entry) + " not found: " + llvm::toString(sym.takeError()));
    return nullptr;
  }
  return new Kernel{reinterpret_cast<KernelFn>(sym->getAddress()), nullptr, &*dylib};
}

// A compiled kernel's library goes with it, and with it the kernel's code and data.
void cpu_release_kernel(void* c, void* k) {
  std::unique_ptr<Kernel> kernel(static_cast<Kernel*>(k));
  if (kernel->dylib == nullptr) return;
  auto* ctx = static_cast<Context*>(c);
  std::lock_guard<std::mutex> lock(ctx->jit_mu);
  llvm::consumeError(ctx->jit->getExecutionSession().removeJITDylib(*kernel->dylib));
}

void* cpu_find_extern(void*, const char* name, char* err, std::size_t err_size) {
  if (std::strcmp(name, "sgemm") == 0) {
    std::string why;
    if (load_sgemm(why) == nullptr) {
      set_error(err, err_size, why);
      return nullptr;
    }
    auto* k = new Kernel;
    k->ext = extern_sgemm;
    return k;
  }
  if (tl::lapack::is_kernel(name)) {
    if (std::string why = tl::lapack::available(); !why.empty()) {
      set_error(err, err_size, why);
      return nullptr;
    }
    auto* k = new Kernel;
    k->lapack = name;
    return k;
  }
  if (tl::fftw::is_kernel(name)) {
    if (std::string why = tl::fftw::available(); !why.empty()) {
      set_error(err, err_size, why);
      return nullptr;
    }
    auto* k = new Kernel;
    k->fftw = name;
    return k;
  }
  std::string known = "sgemm";
  for (const std::string& n : tl::lapack::kernel_names()) known += ", " + n;
  for (const std::string& n : tl::fftw::kernel_names()) known += ", " + n;
  set_error(err, err_size,
            std::string("no external kernel named \"") + name + "\" (the cpu backend has: " + known + ")");
  return nullptr;
}

// A launch of at most this much work (element operations, as the launch counts them) runs
// to its end without asking the cancel function: a few milliseconds.
constexpr std::int64_t kShortLaunchWork = std::int64_t{1} << 22;
// How long a chunk of a launch's iterations runs, about: how long Ctrl-C waits at most (or
// one iteration, when that is longer), and long enough that handing out chunks costs nothing.
constexpr std::chrono::microseconds kChunkTime{2000};
// The first chunk's work. Chunks then grow (at most four times) or shrink to take about
// kChunkTime, so a wrong work estimate costs a few chunks, not the latency.
constexpr std::int64_t kFirstChunkWork = std::int64_t{1} << 16;

// Runs iterations [0, count) of a kernel on `parts` threads, each taking chunks of them from
// a shared counter and asking the host's cancel function before each. Returns false when it
// stopped early because the host cancelled (the output is then partly written).
bool run_in_chunks(const Context& ctx, KernelFn fn, void* const* buffers, const int64_t* vars, std::int64_t count,
                   std::int64_t work, int parts) {
  std::atomic<std::int64_t> next{0};
  std::atomic<bool> cancelled{false};
  const std::int64_t most = (count + parts - 1) / parts;  // no chunk above a thread's share
  ctx.pool->run(parts, [&](int) {
    std::int64_t chunk = std::clamp<std::int64_t>(kFirstChunkWork / work, 1, most);
    for (;;) {
      if (cancelled.load(std::memory_order_relaxed)) return;
      if (ctx.cancel_requested()) {
        cancelled.store(true, std::memory_order_relaxed);
        return;
      }
      const std::int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
      if (begin >= count) return;
      const std::int64_t end = std::min(count, begin + chunk);
      const auto t0 = std::chrono::steady_clock::now();
      fn(buffers, vars, begin, end);
      const auto dt = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
      const double scale = static_cast<double>(std::chrono::nanoseconds(kChunkTime).count()) / std::max<double>(1.0, dt);
      chunk = std::clamp<std::int64_t>(static_cast<std::int64_t>(static_cast<double>(end - begin) * std::min(scale, 4.0)), 1, most);
    }
  });
  return !cancelled.load();
}

int cpu_launch(void* c, void* k, void* const* buffers, std::size_t buffer_count, const int64_t* vars,
               std::size_t var_count, const tl_launch* launch, char* err, std::size_t err_size) {
  auto* ctx = static_cast<Context*>(c);
  if (std::string why = check_device_pointers(ctx, buffers, buffer_count); !why.empty()) {
    set_error(err, err_size, why);
    return 1;
  }
  if (static_cast<Kernel*>(k)->ext != nullptr || !static_cast<Kernel*>(k)->lapack.empty() ||
      !static_cast<Kernel*>(k)->fftw.empty()) {
    bool cancelled = false, input_error = false;
    const Kernel& kernel = *static_cast<Kernel*>(k);
    std::string why = kernel.ext != nullptr  ? kernel.ext(*ctx, buffers, buffer_count, vars, var_count, cancelled)
                      : !kernel.fftw.empty() ? extern_fftw(kernel.fftw, buffers, buffer_count, vars, var_count)
                                             : extern_lapack(*ctx, kernel.lapack, buffers, buffer_count, vars,
                                                             var_count, cancelled, input_error);
    if (cancelled) {
      set_error(err, err_size, "cpu: cancelled");
      return TL_STATUS_CANCELLED;
    }
    if (why.empty()) return 0;
    set_error(err, err_size, why);
    return input_error ? TL_STATUS_VALUE_ERROR : 1;
  }
  KernelFn fn = static_cast<Kernel*>(k)->fn;
  const std::int64_t count = launch->count;
  if (count <= 0) return 0;
  if (!ctx->sim.empty()) {
    bool cancelled = false;
    std::string why = sim_launch(ctx, fn, buffers, vars, *launch, cancelled);
    if (cancelled) {
      set_error(err, err_size, "cpu: cancelled");
      return TL_STATUS_CANCELLED;
    }
    if (why.empty()) return 0;
    set_error(err, err_size, "cpu (sim=" + ctx->sim + "): " + why);
    return 1;
  }
  // Split when each thread gets enough work to pay for waking it (about 32K element ops).
  const std::int64_t work = std::max<std::int64_t>(1, launch->work);
  const std::int64_t total = count > INT64_MAX / work ? INT64_MAX : count * work;
  std::int64_t parts = std::min<std::int64_t>(ctx->pool->size(), count);
  if (ctx->cancelled != nullptr && total > kShortLaunchWork) {
    if (!run_in_chunks(*ctx, fn, buffers, vars, count, work, static_cast<int>(parts))) {
      set_error(err, err_size, "cpu: cancelled");
      return TL_STATUS_CANCELLED;
    }
    return 0;
  }
  parts = std::min<std::int64_t>(parts, std::max<std::int64_t>(1, total / 32768));
  if (parts <= 1) {
    fn(buffers, vars, 0, count);
    return 0;
  }
  ctx->pool->run(static_cast<int>(parts), [&](int p) {
    std::int64_t begin = count * p / parts;
    std::int64_t end = count * (p + 1) / parts;
    if (begin < end) fn(buffers, vars, begin, end);
  });
  return 0;
}

void cpu_set_cancel(void* c, int (*cancelled)(void* user), void* user) {
  auto* ctx = static_cast<Context*>(c);
  ctx->cancelled = cancelled;
  ctx->cancel_user = user;
}

int cpu_synchronize(void*, char*, std::size_t) { return 0; }

// Launches run to their end before they return, so an event is the time it is recorded.
using Clock = std::chrono::steady_clock;
void* cpu_record_event(void*, char*, std::size_t) { return new Clock::time_point(Clock::now()); }
int cpu_event_seconds(void*, void* start, void* end, double* seconds, char*, std::size_t) {
  *seconds = std::chrono::duration<double>(*static_cast<Clock::time_point*>(end) - *static_cast<Clock::time_point*>(start)).count();
  return 0;
}
void cpu_release_event(void*, void* e) { delete static_cast<Clock::time_point*>(e); }

std::string sim_launch(Context* ctx, KernelFn fn, void* const* buffers, const int64_t* vars, const tl_launch& l,
                       bool& cancelled) {
  const bool groups = l.group > 0;
  if (groups && (l.group % kWarp != 0 || l.group > 1024)) {
    return "a thread group of " + std::to_string(l.group) + " threads (must be a multiple of 32, at most 1024)";
  }
  if (!groups && l.block > 1024) return "blocks of " + std::to_string(l.block) + " threads (at most 1024)";
  const int64_t block = groups ? l.group : l.block > 0 ? l.block : static_cast<int64_t>(ctx->sim_block);
  const int64_t blocks = groups ? l.count : (l.count + block - 1) / block;
  const int parts = static_cast<int>(std::min<int64_t>(ctx->pool->size(), blocks));
  std::vector<std::string> errors(static_cast<std::size_t>(std::max(parts, 1)));
  std::atomic<bool> stop{false};
  ctx->pool->run(parts, [&](int p) {
    thread_local SimThread s;  // its fibers' stacks are kept for the next launch
    s.fn = fn;
    s.buffers = buffers;
    s.vars = vars;
    s.begin = 0;
    s.end = l.count;
    t_sim = &s;
    std::string& error = errors[static_cast<std::size_t>(p)];
    for (int64_t b = blocks * p / parts; b < blocks * (p + 1) / parts && error.empty(); ++b) {
      if (stop.load(std::memory_order_relaxed)) break;
      if (ctx->cancel_requested()) {
        stop.store(true, std::memory_order_relaxed);
        break;
      }
      if (groups) {
        error = sim_group_block(s, b, block);
        continue;
      }
      s.block = b;
      s.block_dim = block;
      std::fill(s.shared.begin(), s.shared.end(), 0xff);
      for (s.thread = 0; s.thread < block && s.error.empty(); ++s.thread) fn(buffers, vars, s.begin, s.end);
      error = s.error;
    }
    s.error.clear();
    t_sim = nullptr;
  });
  for (const std::string& e : errors) {
    if (!e.empty()) return e;
  }
  cancelled = stop.load();
  return {};
}

const tl_backend_api kApi = {
    .abi_version = TL_BACKEND_ABI_VERSION,
    .struct_size = sizeof(tl_backend_api),
    .name = "cpu",
    .create = cpu_create,
    .destroy = cpu_destroy,
    .device_info = cpu_device_info,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_in = cpu_copy,
    .copy_out = cpu_copy,
    .compile = cpu_compile,
    .release_kernel = cpu_release_kernel,
    .launch = cpu_launch,
    .synchronize = cpu_synchronize,
    .find_extern = cpu_find_extern,
    .record_event = cpu_record_event,
    .event_seconds = cpu_event_seconds,
    .release_event = cpu_release_event,
    .set_cancel = cpu_set_cancel,
};

}  // namespace

// What a simulated GPU kernel asks of its GPU (SimCodegen): this thread's block and index in
// it, the block's size and shared memory, barriers and shuffles. Only a group kernel's threads
// (fibers) may meet at barriers and shuffles.
extern "C" {
int64_t tl_sim_block() { return t_sim != nullptr ? t_sim->block : 0; }
int64_t tl_sim_thread() { return t_sim != nullptr ? t_sim->thread : 0; }
int64_t tl_sim_block_dim() { return t_sim != nullptr ? t_sim->block_dim : 1; }
void* tl_sim_shared() { return t_sim != nullptr ? t_sim->shared.data() : nullptr; }

void tl_sim_barrier() {
  if (t_sim == nullptr) return;
  if (!t_sim->fibers_on) {
    if (t_sim->error.empty()) t_sim->error = "a barrier in a kernel without thread groups";
    return;
  }
  fiber_wait(Fiber::State::Barrier);
}

int32_t tl_sim_shfl_xor(int32_t value, int32_t mask) {
  if (t_sim == nullptr) return value;
  if (!t_sim->fibers_on) {
    if (t_sim->error.empty()) t_sim->error = "a warp shuffle in a kernel without thread groups";
    return value;
  }
  Fiber& f = t_sim->fibers[static_cast<std::size_t>(t_sim->thread)];
  f.value = value;
  f.mask = mask;
  fiber_wait(Fiber::State::Shuffle);
  return f.result;
}
}

// Built into the core library as well as exported, so an embedding host needs no extra file.
extern "C" const tl_backend_api* tl_cpu_backend_entry(uint32_t abi_version) {
  return abi_version == TL_BACKEND_ABI_VERSION ? &kApi : nullptr;
}
