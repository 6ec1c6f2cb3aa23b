// SPDX-License-Identifier: Apache-2.0
// Lowering: one scheduled kernel to a loop-IR kernel, as the schedule describes it. The kernel
// writes the node, contiguous and row-major, into buffer 0 and reads the materialized nodes it depends on from buffers
// 1..n (listed in `inputs`, in slot order).
#pragma once

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "codegen/loop_ir.h"
#include "codegen/opts.h"
#include "schedule/schedule.h"

namespace tl::codegen {

struct Lowered {
  Kernel kernel;
  std::vector<const tensor::Node*> inputs;  // nodes read from memory
  std::vector<std::int32_t> input_slots;    // the buffer slot of each (slot 0: the output)
  tensor::Dim parallel_extent = 1;          // iterations of the outermost (parallel) loop
  int group = 0;                            // GPU: threads per iteration (Kernel::group)
  tensor::Dim work_per_iteration = 1;       // elements computed per iteration, for splitting
  // Static counts for reporting rates: the elements the innermost statements run for (the
  // output's, or a reduce's input's) and the arithmetic ops each runs (index math excluded).
  tensor::Dim elements = 1;
  int ops_per_element = 0;
  Opts opts;  // the kernel's optimizations, as applied (codegen/opts.h)
};

// What the kernel is for. Cpu: the outermost loop is split across threads, matmul-like sums
// get register tiles and packed operands (scratch memory). Gpu: plain loops, no scratch; the
// parallel loop and the loops perfectly nested in it become one thread per iteration
// (gpu_thread_loops), and parallel_extent counts those threads.
enum class Target { Cpu, Gpu };

// How a code generator wants kernels lowered.
struct Lowering {
  Target target = Target::Cpu;
  // GPU: the threads of a group when a reduce is split across threads (Kernel::group): a power
  // of two from 32 to 1024, or 0 never to split. A reduce is split when it runs at least
  // min_group_reduce iterations per output and either there are at most few_threads outputs
  // (too few threads to fill the GPU otherwise) or its loads run along memory in the reduce
  // (coalesced across a group) rather than across the outputs (coalesced across threads).
  int group = 256;
  std::int64_t min_group_reduce = 32;
  std::int64_t few_threads = 4096;
  // CPU: the f32 lanes of the vectors the emitter uses and how many vector registers the
  // target has (AVX2: 8 and 16; AVX-512: 16 and 32). Matmul-like kernels shape their register
  // tiles from them (lower.cpp, tile_shape).
  int vector_floats = 8;
  int vector_registers = 16;
  // The opts to apply to every kernel lowered (elementwise and reduce kernels; the others take
  // none), instead of those lowering chooses. An opt that does not apply is an optimizer-error.
  std::optional<Opts> opts;
  // Print the kernel's loop IR (through tl::log) after the passes of this name
  // (codegen/passes/passes.h: build, split, swap, pack, upcast, group-reduce), or after
  // every pass for "all"; "" prints nothing.
  std::string dump_after;
  Lowering(Target t = Target::Cpu) : target(t) {}  // NOLINT: a Target is a Lowering with defaults
};

// Lowers kernel K of a schedule whose materialized nodes are MATERIALIZED (read from memory,
// not computed inline): builds its plain loop nest, then runs the passes of
// codegen/passes/passes.h (its opts, then on GPUs the thread-group split of reduces), checking
// the loop IR after each.
Lowered lower(const schedule::ScheduledKernel& k, const std::unordered_set<const tensor::Node*>& materialized,
              const Lowering& how = Lowering());

// The tuner's candidates for kernel K: the opts of a register tile of each size ROWS x COLS
// that divides its output (a matmul-like f32 sum on the CPU; none for other kernels).
std::vector<Opts> tile_candidates(const schedule::ScheduledKernel& k,
                                  const std::unordered_set<const tensor::Node*>& materialized, const Lowering& how,
                                  const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& cols);

}  // namespace tl::codegen
