// SPDX-License-Identifier: Apache-2.0
// What a search over opts may try next. A kernel's optimization is a list of opts
// (codegen/opts.h); a beam search (runtime/beam.h) grows lists one opt at a time, lowering
// and timing each. search_actions lists the opts worth appending to a kernel as lowered so
// far; lowering then rejects those that do not apply (an optimizer-error), as for opts given
// by hand.
#pragma once

#include <vector>

#include "codegen/loop_ir.h"
#include "codegen/opts.h"

namespace tl::codegen {

// The opts to try after those that made kernel K (its loop IR as lowered, opts applied):
//   (split L F)   for every loop L of constant extent E and each F of 2, 3, 4, 6, 8, 16, 32,
//                 64, 128, 256 that divides E and is less than it
//   (upcast L)    for every loop L of constant extent from 2 to 16 that is not the parallel one
//   (swap L)      for every loop whose body is one loop (they trade places)
//   (merge L)     the same loops (they become one)
//   (lanes L F)   for every innermost loop that updates an accumulator, F = 8 and 16
//   (pack P R)    unless K's opts already pack: for P the kernel (-1) or a loop holding a loop,
//                 and R each loop inside P (the values that do not change along R)
// In that order, each loop outermost first. `packed`: whether the opts so far hold a pack.
std::vector<Opt> search_actions(const Kernel& k, bool packed);

}  // namespace tl::codegen
