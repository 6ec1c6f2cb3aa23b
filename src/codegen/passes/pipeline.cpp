// SPDX-License-Identifier: Apache-2.0
// The list of lowering passes and the dispatch of one opt to its pass (passes.h).
#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

const std::vector<PassInfo>& lowering_passes() {
  static const std::vector<PassInfo> kPasses = {
      {"build",
       "the plain loop nest of the scheduled kernel: a loop per output axis, reduce loops inside an "
       "accumulator, views as index arithmetic (codegen/lower.cpp; the (interchange) opt applies here)"},
      {"split",
       "(split L F): loop L becomes a loop of E/F around a loop of F; a ragged last block computes the last "
       "iteration again, its stores masked (passes/split.cpp)"},
      {"swap", "(swap L): loop L trades places with the loop that is its body (passes/swap.cpp)"},
      {"pack",
       "(pack L R V...): the reduce operand that does not change along R is copied to scratch at the start "
       "of L, laid out over V... (passes/pack.cpp)"},
      {"upcast", "(upcast L): loop L unrolled, its accumulators one per copy: register tiles (passes/upcast.cpp)"},
      {"partial",
       "(partial L): each iteration of loop L sums into partial sums of its own, added to the totals "
       "after it (passes/partial.cpp)"},
      {"lanes",
       "(lanes L F): the innermost reduce loop L adds into F accumulators, element j of each block of F into "
       "accumulator j, combined after it (passes/lanes.cpp)"},
      {"qdot",
       "(qdot L F): a float sum of scaled products of two byte-sized integers (quantized blocks) in lanes of "
       "four-byte integer dot products, F iterations of L per block (passes/qdot.cpp)"},
      {"hoist",
       "(hoist L P): reduce loop L moves out to enclose loop P's body, the partial results stored to the output "
       "and read back between its iterations (passes/hoist.cpp)"},
      {"peel",
       "(peel L): the last iteration of loop L runs as a copy of its own, the others knowing they are not last, "
       "so a ragged split's clamps and masks fold away (passes/peel.cpp)"},
      {"merge",
       "(merge L): loop L and the loop that is its body become one loop over both; contiguous axes fold back "
       "to one linear index (passes/merge.cpp)"},
      {"group-reduce",
       "(group G), GPU only, last: the reduces that pay for it split across a group of G threads per output, "
       "combined after; chosen by lowering when not given (codegen/split_reduce.cpp)"},
  };
  return kPasses;
}

void apply_opt(Kernel& k, const Opt& o) {
  switch (o.kind) {
    case Opt::Kind::Interchange:
      passes::reject(opt_str(o), "interchange is chosen when the loop nest is built, first in the list");
    case Opt::Kind::Split: split_loop(k, o.loop, o.amount); return;
    case Opt::Kind::Swap: swap_loop(k, o.loop); return;
    case Opt::Kind::Pack: pack_reads(k, o.loop, o.invariant, o.order); return;
    case Opt::Kind::Upcast: upcast_loop(k, o.loop); return;
    case Opt::Kind::Partial: partial_sums(k, o.loop); return;
    case Opt::Kind::Lanes: reduce_lanes(k, o.loop, o.amount); return;
    case Opt::Kind::Qdot: integer_dots(k, o.loop, o.amount); return;
    case Opt::Kind::Hoist: hoist_loop(k, o.loop, static_cast<std::int32_t>(o.amount)); return;
    case Opt::Kind::Peel: peel_loop(k, o.loop); return;
    case Opt::Kind::Merge: merge_loops(k, o.loop); return;
    case Opt::Kind::Group:
      passes::reject(opt_str(o), "the thread-group split is applied by lowering a GPU kernel, last in its opts");
  }
}

}  // namespace tl::codegen
