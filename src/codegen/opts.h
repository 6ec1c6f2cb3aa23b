// SPDX-License-Identifier: Apache-2.0
// Kernel optimizations ("opts"): the transforms that turn a kernel's plain loop nest into the
// code that runs, as a list that prints, reads back and replays. Lowering builds the plain
// nest (one loop per output axis, reduce loops inside an accumulator), then applies the
// kernel's opts in order, each a pass over the loop IR (codegen/passes/). A loop is named by
// its id, the N of `iN` in the printed kernel; a pass that makes loops gives them the next
// free ids in order, so a list chosen for a kernel replays exactly on the same kernel.
//
//   (interchange)      a reduce accumulates in its output row, the last output axis looping
//                      innermost (chosen when building the nest: only first in a list)
//   (split L F)        loop L of extent E becomes a loop of E/F around a loop of F; L's variable
//                      is outer * F + inner (when F does not divide E, ceil(E/F) blocks, the last
//                      computing iteration E-1 again with its stores masked: only where that
//                      changes nothing)
//   (swap L)           loop L trades places with the one statement of its body, a loop
//   (pack L R V...)    at the start of loop L's body (L = -1: the kernel's), the values that
//                      the reduce updates inside L read and that do not change along loop R are
//                      copied into scratch memory laid out over the loops V... (outermost first;
//                      all the loops inside L they depend on), and read from there; with V...
//                      given, values that depend on a loop inside L it does not list stay
//                      where they are (an online softmax packs its keys, not its values)
//   (upcast L)         loop L is unrolled: its body is repeated once per iteration, loops inside
//                      it shared, accumulators defined inside it one per copy (register tiles)
//   (partial L)        each iteration of loop L adds into partial sums of its own, each added
//                      to its float sum's accumulator at the end of the iteration (accuracy)
//   (lanes L F)        the innermost reduce loop L adds into F accumulators per reduce, element
//                      j of each block of F into lane j, the rest into lane 0; the lanes are
//                      combined after L (independent chains that vectorize)
//   (qdot L F)         a float sum over innermost loop L of products of two byte-sized integers and
//                      a scale (quantized blocks: int8 activations times int8 or 4-bit codes) adds
//                      F/4 lanes per block of F iterations, each lane one four-byte integer
//                      dot product (vpdpbusd, dp4a) times the scale; combined after L
//   (hoist L P)        reduce loop L moves out of its accumulators' scope to enclose the body
//                      of loop P (P = -1: the kernel's): each iteration of L reads the partial
//                      results back from the output and stores them again (a matmul's K blocks)
//   (peel L)           the last iteration of loop L runs as a copy of its own, the others knowing
//                      they are not last: a ragged split's clamps and masks fold away (full
//                      tiles run without them) and become constants in the last one
//   (merge L)          loop L and the loop that is its body become one loop (the next free id)
//                      over both, L's variable its index / E and the inner's its index mod E
//                      (E the inner extent): contiguous axes fold back to one linear index
//   (group G)          GPU kernels only, last in a list: the reduces that pay for it split
//                      across a group of G threads per output (a power of two from 32 to 1024),
//                      combined across the group after their loops; (group 0) splits none.
//                      Lowering adds the split it chose for a GPU kernel, so it prints
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tl::codegen {

struct Opt {
  enum class Kind : std::uint8_t {
    Interchange,
    Split,
    Swap,
    Pack,
    Upcast,
    Partial,
    Lanes,
    Qdot,
    Hoist,
    Peel,
    Merge,
    Group
  };
  Kind kind = Kind::Split;
  std::int32_t loop = -1;           // the loop it applies to (pack: -1 for the kernel's body)
  std::int64_t amount = 0;          // split: the inner loop's extent; lanes: their number; qdot: F; hoist: P; group: G
  std::int32_t invariant = -1;      // pack: the loop along which the packed values do not change
  std::vector<std::int32_t> order;  // pack: the scratch's axes, outermost first

  bool operator==(const Opt& o) const {
    return kind == o.kind && loop == o.loop && amount == o.amount && invariant == o.invariant && order == o.order;
  }

  static Opt interchange() { return make(Kind::Interchange, -1); }
  static Opt split(std::int32_t loop, std::int64_t factor) {
    Opt o = make(Kind::Split, loop);
    o.amount = factor;
    return o;
  }
  static Opt swap(std::int32_t loop) { return make(Kind::Swap, loop); }
  static Opt upcast(std::int32_t loop) { return make(Kind::Upcast, loop); }
  static Opt partial(std::int32_t loop) { return make(Kind::Partial, loop); }
  static Opt peel(std::int32_t loop) { return make(Kind::Peel, loop); }
  static Opt merge(std::int32_t loop) { return make(Kind::Merge, loop); }
  static Opt group(std::int64_t threads) {
    Opt o = make(Kind::Group, -1);
    o.amount = threads;
    return o;
  }
  static Opt lanes(std::int32_t loop, std::int64_t n) {
    Opt o = make(Kind::Lanes, loop);
    o.amount = n;
    return o;
  }
  static Opt qdot(std::int32_t loop, std::int64_t width) {
    Opt o = make(Kind::Qdot, loop);
    o.amount = width;
    return o;
  }
  static Opt hoist(std::int32_t loop, std::int32_t into) {
    Opt o = make(Kind::Hoist, loop);
    o.amount = into;
    return o;
  }
  static Opt pack(std::int32_t loop, std::int32_t invariant, std::vector<std::int32_t> order) {
    Opt o = make(Kind::Pack, loop);
    o.invariant = invariant;
    o.order = std::move(order);
    return o;
  }

 private:
  static Opt make(Kind k, std::int32_t loop) {
    Opt o;
    o.kind = k;
    o.loop = loop;
    return o;
  }
};

using Opts = std::vector<Opt>;

const char* opt_name(Opt::Kind k);
// "(split 3 4)"; a list prints as its opts separated by spaces ("" when empty).
std::string opt_str(const Opt& o);
std::string opts_str(const Opts& opts);
// Reads a list of opts in the printed form, with or without enclosing parentheses:
// "(split 0 4) (upcast 5)" or "((split 0 4) (upcast 5))". An optimizer-error (ConditionError)
// names what is wrong.
Opts parse_opts(std::string_view text);

}  // namespace tl::codegen
