// SPDX-License-Identifier: Apache-2.0
// The loop-IR passes of lowering. lower() builds a kernel's plain loop nest, then runs these
// in order: the kernel's opts (codegen/opts.h), each one transform, then on GPUs the thread
// group split of reduces (codegen/split_reduce.h). The verifier runs after every pass, and
// Lowering::dump_after prints the kernel after the passes it names.
//
// Each transform is a file of its own here. A transform checks what it needs of the kernel and
// throws an optimizer-error (ConditionError) naming the opt and what does not hold, leaving the
// kernel as it was; what it leaves passes verify(). Every transform keeps what the kernel
// computes: split and pack keep the order in which each accumulator adds its terms, so the
// results are identical; so does an upcast, except that an upcast of a loop that holds a loop
// and adds to an accumulator defined outside it (an outer reduce loop) interleaves those terms,
// as a swap of two loops inside an accumulator's scope reorders them (a float sum then differs
// by rounding). A partial regroups a float sum's terms (its purpose: a more accurate sum).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codegen/loop_ir.h"
#include "codegen/opts.h"

namespace tl::codegen {

struct PassInfo {
  const char* name;
  const char* what;
};
// The passes lower() runs, in order (tlisp --print-passes).
const std::vector<PassInfo>& lowering_passes();

// One loop opt (not interchange, which is chosen when the nest is built).
void apply_opt(Kernel& k, const Opt& o);

void split_loop(Kernel& k, std::int32_t loop, std::int64_t factor);  // passes/split.cpp
void swap_loop(Kernel& k, std::int32_t loop);                        // passes/swap.cpp
void upcast_loop(Kernel& k, std::int32_t loop);                      // passes/upcast.cpp
void partial_sums(Kernel& k, std::int32_t loop);                     // passes/partial.cpp
void reduce_lanes(Kernel& k, std::int32_t loop, std::int64_t lanes);  // passes/lanes.cpp
void integer_dots(Kernel& k, std::int32_t loop, std::int64_t width);  // passes/qdot.cpp
void hoist_loop(Kernel& k, std::int32_t loop, std::int32_t into);       // passes/hoist.cpp
void peel_loop(Kernel& k, std::int32_t loop);                        // passes/peel.cpp
void merge_loops(Kernel& k, std::int32_t loop);                      // passes/merge.cpp
void pack_reads(Kernel& k, std::int32_t loop, std::int32_t invariant,
                const std::vector<std::int32_t>& order);  // passes/pack.cpp

// The most copies an upcast makes of a loop's body, and the most scratch bytes one pack uses.
constexpr std::int64_t kMaxUpcast = 256;
constexpr std::int64_t kMaxPackBytes = std::int64_t{1} << 20;

// Checks that the kernel is well formed (passes/verify.cpp): each loop id appears once; every
// loop variable is used only inside its loop and every accumulator only in the scope of its
// definition, with its dtype; loads and stores name existing buffers, stores only the output
// and scratch; parallel loops all have one extent. A violation is an internal error
// naming the pass that ran last and the kernel.
void verify(const Kernel& k, const std::string& after);

}  // namespace tl::codegen
