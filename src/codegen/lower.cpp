// SPDX-License-Identifier: Apache-2.0
// From a scheduled node to loops. Each node's value is an expression of the index into its
// shape; movement ops rewrite that index (a pad also guards the value with its validity),
// so views cost index arithmetic, never copies.
// Then lower() runs the passes of codegen/passes/ over the plain nest: the kernel's opts (chosen
// here for the CPU, choose_opts) and on GPUs the thread-group split.
// (Over 800 lines: the Lowerer is one class whose builders (plain, rows, online softmax, view
// assign, scatter add) and the CPU's choice of opts share its index memo, buffer slots and loop ids.)
#include "codegen/lower.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <unordered_set>

#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"
#include "codegen/split_reduce.h"
#include "support/check.h"
#include "support/condition_error.h"
#include "support/log.h"

namespace tl::codegen {

using tensor::Dim;
using tensor::Node;
using tensor::Op;
using schedule::value_source;

namespace {

class Lowerer {
 public:
  Lowerer(const schedule::ScheduledKernel& sk, const std::unordered_set<const Node*>& materialized, const Lowering& how)
      : sk_(sk), out_(sk.out), materialized_(materialized), how_(how), gpu_(how.target == Target::Gpu) {
    if (tensor::is_quantized(out_->dtype)) {
      // The graph dequantizes a quantized tensor wherever it is computed with (Graph::dequantized).
      throw ConditionError("dtype-error", tensor::quantized_result_message(out_->dtype));
    }
    k_.buffers.push_back(BufferParam{out_->dtype, true});
  }

  // Follows the schedule's kind for the kernel. An elementwise or reduce kernel is built as its
  // plain loop nest, and its opts are chosen (or taken from the Lowering) for lower() to apply.
  Lowered run() {
    using schedule::KernelKind;
    switch (sk_.kind) {
      case KernelKind::ScatterAdd: {
        Lowered result = build_scatter_add();
        finish(result, out_);
        return result;
      }
      case KernelKind::ViewAssign: {
        Lowered result = build_view_assign();
        finish(result, out_->src[1].get());
        return result;
      }
      case KernelKind::Rows: {
        Lowered result = build_rows(sk_.rows);
        if (how_.opts) result.opts = *how_.opts;
        finish(result, out_);
        return result;
      }
      case KernelKind::OnlineSoftmax: {
        Lowered result = build_online(sk_.online);
        if (how_.opts) result.opts = *how_.opts;
        finish(result, sk_.online.contraction->src[0].get());
        return result;
      }
      case KernelKind::Elementwise:
      case KernelKind::Reduce: break;
      case KernelKind::Extern: TL_UNREACHABLE("lower: an extern kernel is not lowered");
    }
    const Node* red = sk_.reduce;
    Lowered result = build(red, false);
    // A sum whose terms compute reduces inline (recomputed attention: the q . k products under
    // the weights, schedule.cpp's recompute_softmax) accumulates in an output row its inline
    // reduces do not depend on, so they run once per term, not once per element of the row.
    const std::int32_t row = red != nullptr ? row_axis(red) : -1;
    if (red != nullptr && !gpu_ && !how_.opts && !inline_indices_.empty()) {
      if (auto plan = recompute_plan(red, row)) {
        rebuild();
        Lowered blocked = build_recompute_blocked(red, *plan);
        finish(blocked, red->src[0].get());
        return blocked;
      }
    }
    Opts opts = how_.opts                          ? *how_.opts
                : red == nullptr || gpu_           ? Opts{}
                : inline_indices_.empty()          ? choose_opts(red)
                : row >= 0 && can_interchange(red) ? Opts{Opt::interchange()}
                                                   : Opts{};
    if (!opts.empty() && opts.front().kind == Opt::Kind::Interchange) {
      if (red == nullptr || gpu_ || !can_interchange(red)) {
        throw ConditionError("optimizer-error",
                             "opt (interchange): only a float sum or max on the CPU accumulates in its output row (in "
                             "scratch when the kernel stores another dtype: at most 256 KiB of it, of a constant "
                             "size)");
      }
      rebuild();
      result = build(red, true, row);
    }
    if (!how_.opts) opts.insert(opts.end(), inline_lanes_.begin(), inline_lanes_.end());
    result.opts = std::move(opts);
    finish(result, red ? red->src[0].get() : out_);
    if (red == nullptr && !gpu_ && !how_.opts) result.opts = merges(result.kernel);
    return result;
  }

  // A CPU elementwise kernel's loops, merged from the parallel loop inwards for as long as the
  // axes are contiguous (the merged index folds back to a linear one, no division left): one
  // long loop that the threads share evenly (a (2, 1000000) array's two rows gave two threads
  // at most) and that vectorizes whole (a (1000, 3) array's rows of 3 did not).
  static Opts merges(const Kernel& k) {
    Opts out;
    Kernel trial = k;
    for (;;) {
      const Stmt* top = nullptr;
      for (const Stmt& s : trial.body) {
        if (s.kind == Stmt::Kind::Loop && s.parallel) top = &s;
      }
      if (top == nullptr || top->body.size() != 1 || top->body[0].kind != Stmt::Kind::Loop) break;
      const std::int32_t var = top->var;
      Kernel next = trial;
      try {
        merge_loops(next, var);
      } catch (const ConditionError&) {
        break;
      }
      if (divides_along(next, next.body, next.loop_count() - 1, false)) break;
      out.push_back(Opt::merge(var));
      trial = std::move(next);
    }
    return out;
  }

  // Whether a division or remainder in the statements BODY of kernel K depends on loop LOOP
  // (with INDEX_ONLY, of index arithmetic, i64, only: a q4_0 nibble's i32 division is data).
  static bool divides_along(const Kernel& k, const std::vector<Stmt>& body, std::int32_t loop, bool index_only) {
    bool divides = false;
    passes::each_stmt(body, [&](const Stmt& s) {
      k.visit({s.value, s.index, s.mask, s.extent}, [&](ExprId id, const Expr& e) {
        if ((e.op == EOp::Idiv || e.op == EOp::Mod) && (!index_only || e.dtype == DType::I64) &&
            passes::uses_loop(k, id, loop)) {
          divides = true;
        }
        return !divides;
      });
    });
    return divides;
  }

  void finish(Lowered& result, const Node* counted) {
    result.elements = tensor::shape_numel(counted->shape);
    result.ops_per_element = arithmetic_ops();  // of the plain nest: ops per output element
    result.kernel = std::move(k_);
    result.inputs = std::move(inputs_);
    result.input_slots = std::move(input_slots_);
  }

  // The CPU's choice of opts for a reduce: a register tile for a matmul-like sum (with the
  // operand that does not change along the rows packed), the output-row accumulation
  // (interchange) when its loads then run along memory, partial sums per pass of a float sum
  // over several loops, or none.
  Opts choose_opts(const Node* red) {
    const bool interchange = interchange_pays(red);
    // A tile only for a sum of products: a plain sum's loads each feed one add, so a tile
    // reuses nothing and its loads jump between rows (a batch sum of a (16 128 512) gradient
    // ran at 2 GB/s in 96 scalar accumulators; interchanged, it streams).
    std::optional<Tile> tile = sum_of_products() ? tile_plan(red) : std::nullopt;
    // Quantized weights: each row's reduce in lanes along the blocks (a decode step's one row,
    // a short prompt's few), or with many rows a packed tile, whose packing dequantizes each
    // panel once for all of them. (Unpacked, a tile or an interchanged sum reads the blocks
    // across their rows, element by element: a 16-token prefill of GPT-2 ran 2.6x slower than
    // f32's. 2304 x 768 q8_0 on one AVX-512 thread: 16 rows 1.9 ms in lanes, 2.2 ms packed;
    // 32 rows 3.9 ms in lanes, 2.4 ms packed.)
    // Many rows take the packed tile (its packing converts each panel once for all of them).
    const bool many_rows = tile && tile->packs && tile->rows >= kQuantPackRows;
    if (reads_quantized() && many_rows) return tile->opts;
    if (reads_bytes() && !many_rows) {
      if (auto dots = integer_dot_lanes()) return *dots;
    }
    if (reads_quantized()) {
      if (auto blocks = block_lanes()) return *blocks;
    }
    if (tile && interchange && tile->rows < full_tile_rows()) {
      // Fewer rows than a full tile's make short multiply-add chains (2 rows x 2 vectors: 4):
      // accumulating in the output row, streaming the right operand, is faster (4 x 768 @
      // 768 x 3072: 0.57 ms against 1.08 ms tiled).
      return {Opt::interchange()};
    }
    // (Not over f16 or bf16 operands that pack: the packing converts each panel once for all
    // the rows, where an unpacked tile converts at every load: 16 x 768 @ 768 x 3072 bf16 on
    // one AVX-512 thread, 1.0 ms packed, 11 ms not.)
    if (tile && interchange && tile->rows < kPackRows && !(reads_half() && tile->packs)) {
      tile = tile_plan(red, 0, 0, false, false);
    }
    if (tile && (interchange || tile->packs)) return tile->opts;
    if (interchange) return {Opt::interchange()};
    // A float max adds into lanes: independent chains that vectorize.
    if (!reduce_loops_.empty()) {
      const DType acc_t = acc_dtype(red->dtype);
      if (auto lanes = lanes_for(red->reduce_kind, reduce_loops_.back(), reduce_extents_.back(), acc_t)) return {*lanes};
    }
    // A float sum over several reduce loops adds each pass of the inner loops into a partial
    // sum of its own, then the partial into the total: one running f32 total over all
    // elements stops growing at 2^24 times the increment (issue 19). (On a GPU, long reduces
    // are split across threads instead.)
    if (reduce_loops_.size() >= 2 && red->reduce_kind == ReduceKind::Sum && tensor::is_float(red->dtype)) {
      return {Opt::partial(reduce_loops_[0])};
    }
    return {};
  }

  // An input of bytes: int8 or uint8 values, or quantized blocks (what qdot multiplies).
  bool reads_bytes() const {
    return std::any_of(inputs_.begin(), inputs_.end(), [](const Node* n) {
      return tensor::is_quantized(n->dtype) || n->dtype == DType::I8 || n->dtype == DType::U8;
    });
  }

  bool reads_half() const {
    return std::any_of(inputs_.begin(), inputs_.end(),
                       [](const Node* n) { return n->dtype == DType::F16 || n->dtype == DType::BF16; });
  }

  bool reads_quantized() const {
    return std::any_of(inputs_.begin(), inputs_.end(), [](const Node* n) { return tensor::is_quantized(n->dtype); });
  }

  // For a reduce that reads a quantized buffer along its innermost loop: (lanes L 32), one
  // lane per element of a block, when the lanes' copies of the body then index the blocks
  // without division (the innermost extent a multiple of 32, the quantized axis innermost):
  // each block's scale is read once for its 32 copies, which read its packed values at
  // consecutive bytes, and the 32 running sums (vector registers) are combined once per
  // output. (A loop split at the block size ran 3x slower: its inner loop of 32 vectorized,
  // but combined its vector sum into one number every block; 2304 x 768 q8_0, one AVX-512
  // thread: 445 us split, 144 us in lanes, f32 137 us.)
  std::optional<Opts> block_lanes() const {
    if (reduce_loops_.empty() || !reads_quantized()) return std::nullopt;
    auto extent = k_.as_const(reduce_extents_.back());
    if (!extent || *extent % 32 != 0) return std::nullopt;
    const std::int32_t loop = reduce_loops_.back();
    Kernel trial = k_;
    reduce_lanes(trial, loop, 32);
    bool divides = false;
    passes::each_stmt(trial.body, [&](const Stmt& l) {
      if (l.kind == Stmt::Kind::Loop && l.lanes) divides = divides || divides_along(trial, l.body, l.var, true);
    });
    if (divides) return std::nullopt;
    return Opts{Opt::lanes(loop, 32)};
  }

  // For a reduce of products of bytes (quantized weights times an activation quantized to int8
  // values and a scale per block by the quantized-dot rules, or int8 tensors), (qdot L F): integer
  // dot products of four bytes, F iterations per block: two 32-element blocks when the reduce
  // has an even number (16 lanes: one 512-bit vector, two 256-bit ones), else one. None when
  // the terms are not such products (the qdot pass says why). (A register tile of outputs,
  // (split L R) (upcast) first, shares the activation's words and the corrections among R
  // rows of the weight, but ran no faster on one Zen 3 thread: 2304 x 768 q4_0 97-105 us with
  // R = 4 against 106-108 us, q8_0 worse, and a GPT-2 decode slower.)
  std::optional<Opts> integer_dot_lanes() const {
    if (reduce_loops_.empty()) return std::nullopt;
    auto extent = k_.as_const(reduce_extents_.back());
    for (std::int64_t w : {64, 32}) {
      if (!extent || *extent % w != 0) continue;
      Kernel trial = k_;
      try {
        integer_dots(trial, reduce_loops_.back(), w);
      } catch (const ConditionError&) {
        continue;
      }
      return Opts{Opt::qdot(reduce_loops_.back(), w)};
    }
    return std::nullopt;
  }

  // (lanes L F) for the innermost loop L of a float max of at least F iterations, F filling
  // two of the target's vectors of the accumulator's dtype (AVX2: 16 f32 lanes, 8 f64; AVX-512:
  // 32 and 16): independent chains for a NaN-propagating max, which LLVM's loop vectorizer
  // cannot split itself. (On AVX2, 32 lanes ran no faster and took a fifth longer to compile.
  // On AVX-512, 16 lanes were one latency-bound chain: a 4096 x 4096 row max took 8.2 ms on one
  // thread, 3.1-4.0 ms with 32 lanes and 2.6-2.8 ms with 64, which a beam search found first;
  // but with 64 lanes a softmax's kernel took 69 ms to compile, 52 with 32, 44 with 16.) Not for
  // sums: the emitter marks a float sum's adds reassoc, and the loop vectorizer splits those
  // (integer sums and maxes it splits anyway) without copying the body (32 copies of an exp in
  // a softmax's sum pass doubled its compile time). None when L is shorter or its extent is
  // symbolic (the CPU's work estimate takes loop extents as shape dimensions, which have no
  // division).
  std::optional<Opt> lanes_for(ReduceKind kind, std::int32_t loop, ExprId extent, DType acc_t) const {
    if (kind != ReduceKind::Max || !tensor::is_float(acc_t)) return std::nullopt;
    const std::int64_t lanes = 2 * how_.vector_floats * 4 / static_cast<std::int64_t>(tensor::dtype_size(acc_t));
    auto e = k_.as_const(extent);
    if (!e || *e < lanes) return std::nullopt;
    return Opt::lanes(loop, lanes);
  }

  // A register tile for a matmul-like sum: TR x TC outputs (rows of the second-to-last
  // output axis, columns of the last) accumulate in registers over the whole reduce, so each
  // loaded element of either operand feeds several multiply-adds. Only for f32 sums with
  // constant extents (whatever dtype an epilogue then stores: a tanh computed in f64, a cast
  // to bf16). The shape comes from the target's vectors (tile_shape): columns are R / 8
  // vectors of V lanes wide (R vector registers), rows as many as the registers then hold
  // besides a row of the right operand and one broadcast element of the left, 6 on both x86
  // targets: 6 x 16 with AVX2 (12 accumulators of 8 lanes: enough independent multiply-add
  // chains to hide an FMA's latency, where 4 x 16 left an AVX2 core waiting on 8), 6 x 64
  // with AVX-512 (24 of 16 lanes; its 6 x 16 kept 6 chains and ran at 0.6x OpenBLAS: 1024^3
  // on one Sapphire Rapids thread, 14.5 ms against 22.4). Rows that 6 does not divide get a
  // ragged last tile (a clamped split) when there are many, else the most rows up to 6 that
  // divide.
  static constexpr std::int64_t kRaggedRows = 48;  // fewest rows for a ragged tile
  struct TileShape {
    std::int64_t rows = 0, cols = 0;
  };
  std::int64_t widest_tile_vectors() const { return std::max(1, how_.vector_registers / 8); }
  std::int64_t full_tile_rows() const {
    return (how_.vector_registers - widest_tile_vectors() - 1) / widest_tile_vectors();
  }
  // The default tile for an output of ROWS x COLS. Columns: the widest whole number of
  // vectors, up to the widest tile, that divides them; else a result narrower than the widest
  // tile (a classifier's 10 outputs) is one tile wide; else a ragged last tile (its
  // columns past the end compute the last one again and store nothing: GPT-2's 50257 logits
  // ran at a fifth of the speed of 50304 without a tile), the widest when that wastes at most
  // an eighth of the columns, else two vectors wide.
  TileShape tile_shape(std::int64_t rows, std::int64_t cols) const {
    const std::int64_t lanes = how_.vector_floats, wide = widest_tile_vectors() * lanes;
    TileShape t;
    t.rows = full_tile_rows();
    for (std::int64_t v = widest_tile_vectors(); v >= 1 && t.cols == 0; --v) {
      if (cols % (v * lanes) == 0) t.cols = v * lanes;
    }
    if (t.cols == 0 && cols < wide) t.cols = cols;
    if (t.cols == 0) t.cols = ((cols + wide - 1) / wide * wide - cols) * 8 <= cols ? wide : std::min(wide, 2 * lanes);
    if (rows < kRaggedRows) {
      while (rows % t.rows != 0) --t.rows;
    }
    return t;
  }
  static constexpr std::int64_t kMaxScratch = 1 << 20;      // bytes of scratch for a packed panel
  static constexpr std::int64_t kWholeScratch = 128 << 10;  // bytes of a right operand packed whole
  // Fewest rows for packing the right operand panel by panel (one too large to pack whole):
  // the packing reads the whole operand once per call, column block by column block, which
  // few rows do not repay (16 x 768 @ 768 x 3072, a prompt's projection: 6.1 ms packed,
  // 2.1 ms not, on one AVX-512 thread).
  static constexpr std::int64_t kPackRows = 64;
  // Fewest rows for a packed tile over quantized weights (fewer reduce in lanes, row by row).
  static constexpr std::int64_t kQuantPackRows = 20;

  struct Tile {
    Opts opts;
    bool packs = false;  // an operand is packed
    std::int64_t rows = 0;  // the output's rows (of the second-to-last output axis)
  };

  // The opts of a register tile on the plain nest just built, or none when it does not apply.
  // The tile's columns split off the last output loop (c), its rows the one before (r):
  //   (split r TR) (split c TC) (swap r1)   r0 { c0 { r1 { c1 { acc; k { update }; store } } } }
  // then either column blocks outermost, each packing its columns of the right operand once
  // for every row block (a panel of [k][TC]):
  //   (swap r0) (pack c0 r0 k c1)           c0 { pack; r0 { r1 { c1 { ... } } } }
  // or, when the whole right operand fits in kWholeScratch, one pack before the row blocks,
  // laid out tile by tile ([c0][k][TC]), the row blocks in parallel:
  //   (pack P r0 c0 k c1)                   pack; r0 { c0 { r1 { c1 { ... } } } }
  // and last (upcast c1) (upcast r1): TR x TC accumulators, updated in one reduce loop.
  // With WANT_ROWS and WANT_COLS (the tuner's candidates), exactly that tile when it divides
  // the columns and the rows (or the rows are many: a ragged last tile); else the default.
  // BLOCKED (a tuner candidate too): many rows and a right operand too large to pack whole run
  // in cache blocks (blocked_plan). Without PANELS, a right operand too large to pack whole is
  // not packed unless its columns are ragged.
  std::optional<Tile> tile_plan(const Node* red, std::int64_t want_rows = 0, std::int64_t want_cols = 0,
                                bool blocked = false, bool panels = true) {
    if (red->reduce_kind != ReduceKind::Sum || red->dtype != DType::F32) return std::nullopt;
    const tensor::Shape& shape = red->shape;
    std::vector<std::size_t> kept;  // output axes with a loop
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (out_loops_[i] >= 0) kept.push_back(i);
    }
    if (kept.size() < 2) return std::nullopt;
    const std::size_t col = kept.back(), row = kept[kept.size() - 2];
    auto rows = shape[row].as_const(), cols = shape[col].as_const();
    if (!rows || !cols) return std::nullopt;
    const TileShape shape_of_tile = tile_shape(*rows, *cols);
    std::int64_t tile_rows = shape_of_tile.rows, tile_cols = shape_of_tile.cols;
    if (want_rows > 0) {
      if ((*rows % want_rows != 0 && *rows < kRaggedRows) || (*cols % want_cols != 0 && *cols < 2 * want_cols)) {
        return std::nullopt;
      }
      tile_rows = want_rows;
      tile_cols = want_cols;
    }
    if (tile_cols == 0) return std::nullopt;
    Tile t;
    const std::int32_t r = out_loops_[row], c = out_loops_[col];
    // The operand to pack: a factor of the update's product that does not change along the
    // rows, in a sum over one loop of constant extent.
    std::optional<std::int64_t> red_extent;
    if (reduce_loops_.size() == 1) red_extent = k_.as_const(reduce_extents_[0]);
    t.rows = *rows;
    if (red_extent && *red_extent * tile_cols * 4 <= kMaxScratch) {
      ExprId v = update_value_;
      if (k_.expr(v).op == EOp::Cast) v = k_.expr(v).src[0];
      const Expr product = k_.expr(v);
      if (product.op == EOp::Mul) {
        for (ExprId side : {product.src[0], product.src[1]}) {
          const passes::Uses u = passes::uses_of(k_, side);
          if (u.load && !u.acc && !u.loops.count(r) && u.loops.count(reduce_loops_[0])) t.packs = true;
        }
      }
    }
    const bool whole = t.packs && *red_extent * *cols * 4 <= kWholeScratch;
    const bool ragged_rows = *rows % tile_rows != 0, ragged_cols = *cols % tile_cols != 0;
    // Ragged columns are packed all the same: the pack pads the last tile, which in place
    // would clamp every load (48 x 768 @ 768 x 50257: 86 ms packed, 213 ms not).
    if (t.packs && !whole && !panels && !ragged_cols) t.packs = false;
    const std::int32_t n = k_.loop_count();  // the ids the splits give: r0 r1 c0 c1
    const std::int32_t r0 = n, r1 = n + 1, c0 = n + 2, c1 = n + 3;
    if (blocked && t.packs && !whole && *rows >= kRaggedRows) {
      if (auto plan = blocked_plan(r, c, *cols, *red_extent, tile_rows, tile_cols)) {
        t.opts = std::move(*plan);
        if (ragged_rows) t.opts.push_back(Opt::peel(r0));
        return t;
      }
    }
    t.opts = {Opt::split(r, tile_rows), Opt::split(c, tile_cols), Opt::swap(r1)};
    if (whole) {
      // Inside the loop around the rows, if any.
      const std::int32_t around = kept.size() > 2 ? out_loops_[kept[kept.size() - 3]] : -1;
      t.opts.push_back(Opt::pack(around, r0, {c0, reduce_loops_[0], c1}));
    } else {
      t.opts.push_back(Opt::swap(r0));
      if (t.packs) t.opts.push_back(Opt::pack(c0, r0, {reduce_loops_[0], c1}));
    }
    t.opts.push_back(Opt::upcast(c1));
    t.opts.push_back(Opt::upcast(r1));
    // A ragged last tile runs as a copy of its own (the inner block loop first): the full
    // tiles then load and store without clamps or masks.
    std::vector<std::int32_t> peels;
    if (ragged_cols) peels.push_back(c0);
    if (ragged_rows) peels.insert(whole ? peels.end() : peels.begin(), r0);
    for (std::int32_t l : peels) t.opts.push_back(Opt::peel(l));
    return t;
  }

  // Cache blocks for a matmul of many rows whose right operand is too large to pack whole (the
  // layout of Goto's GEMM). A tuner candidate, not the default: on the 2-core AVX2 machine it
  // was measured on (512 KiB of L2 a core) it ran no faster than the column panels, within
  // that machine's noise, and slower for (512x768)@(768x3072) on one thread. The layout:
  // column blocks of NC columns (each a parallel iteration) and, when the reduce is longer
  // than kBlockDepth, blocks of KC terms of it, so that one packed block of the right operand
  // (KC x NC, a quarter of a 1 MiB L2 at most) serves every row tile while the row tile's KC
  // terms, packed, stay in L1 across the block's column tiles:
  //   (split r TR) (split c NC) (split cB TC) (split k KC)
  //   (swap r1) (swap r0) (swap r1)         c0 { r0 { cb0 { r1 { cb1 { acc; k0 { k1 } } } } } }
  //   (hoist k0 c0)                         c0 { k0 { r0 { cb0 { r1 { cb1 { acc; k1 } } } } } }
  //   (pack k0 r0 cb0 k1 cb1)               c0 { k0 { pack; r0 { ... } } }
  //   (pack r0 cb0 k1 r1)                   c0 { k0 { pack; r0 { pack; cb0 { ... } } } }
  //   (upcast cb1) (upcast r1)
  // The hoist keeps each tile's partial sums in the output between the blocks of the reduce
  // (the same additions in the same order: results are identical). None when no NC (a
  // multiple of TC dividing the columns) is wider than one tile.
  static constexpr std::int64_t kBlockDepth = 256;    // KC at most
  static constexpr std::int64_t kBlockWidth = 256;    // NC at most
  static constexpr std::int64_t kBlockBytes = 256 << 10;  // KC x NC x 4 at most
  std::optional<Opts> blocked_plan(std::int32_t r, std::int32_t c, std::int64_t cols, std::int64_t depth,
                                   std::int64_t tile_rows, std::int64_t tile_cols) {
    // KC: the reduce whole when short, else the largest divisor of it from kBlockDepth down
    // to a quarter of that (none: not blocked).
    std::int64_t kc = depth;
    if (depth > kBlockDepth + kBlockDepth / 4) {
      kc = 0;
      for (std::int64_t d = kBlockDepth; d >= kBlockDepth / 4 && kc == 0; d -= 8) {
        if (depth % d == 0) kc = d;
      }
      if (kc == 0) return std::nullopt;
    }
    std::int64_t nc = 0;
    for (std::int64_t w = kBlockWidth / tile_cols * tile_cols; w > tile_cols && nc == 0; w -= tile_cols) {
      if (cols % w == 0 && kc * w * 4 <= kBlockBytes) nc = w;
    }
    if (nc == 0) return std::nullopt;
    const std::int32_t n = k_.loop_count();
    const std::int32_t r0 = n, r1 = n + 1, c0 = n + 2, cb = n + 3, cb0 = n + 4, cb1 = n + 5;
    const std::int32_t k = reduce_loops_[0];
    Opts o = {Opt::split(r, tile_rows), Opt::split(c, nc), Opt::split(cb, tile_cols)};
    std::int32_t k0 = -1, k1 = k;
    if (kc < depth) {
      o.push_back(Opt::split(k, kc));
      k0 = n + 6;
      k1 = n + 7;
    }
    o.push_back(Opt::swap(r1));
    o.push_back(Opt::swap(r0));
    o.push_back(Opt::swap(r1));
    if (k0 >= 0) {
      o.push_back(Opt::hoist(k0, c0));
      o.push_back(Opt::pack(k0, r0, {cb0, k1, cb1}));
    } else {
      o.push_back(Opt::pack(c0, r0, {cb0, k1, cb1}));
    }
    // The row tile's slice of the left operand, [k1][r1], read by every column tile of the block.
    o.push_back(Opt::pack(r0, cb0, {k1, r1}));
    o.push_back(Opt::upcast(cb1));
    o.push_back(Opt::upcast(r1));
    return o;
  }

  // The tuner's candidates for this kernel: a register tile of each size ROWS x COLS that
  // fits, and each in cache blocks where that applies (none for a kernel that is not a
  // matmul-like sum).
  std::vector<Opts> tile_candidates(const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& cols) {
    std::vector<Opts> out;
    const Node* red = sk_.reduce;
    if (gpu_ || red == nullptr || (sk_.kind != schedule::KernelKind::Reduce)) return out;
    build(red, false);
    for (std::int64_t r : rows) {
      for (std::int64_t c : cols) {
        for (bool blocked : {false, true}) {
          if (auto t = tile_plan(red, r, c, blocked); t && std::find(out.begin(), out.end(), t->opts) == out.end()) {
            out.push_back(t->opts);
          }
        }
      }
    }
    return out;
  }

  // Starts the kernel's loops again (for another build): its buffers and expressions stay.
  void rebuild() {
    k_.body.clear();
    memo_.clear();
    fused_reduce_ = nullptr;
    inline_indices_.clear();
    inline_lanes_.clear();
  }

  // For reshape N that only adds or drops axes of size 1: for each of its axes, the axis of
  // its source it is (-1: one of size 1 it added). None for any other reshape.
  static std::optional<std::vector<int>> unit_reshape_axes(const Node* n) {
    const Node* src = n->src[0].get();
    std::vector<int> to(n->shape.size(), -1);
    std::size_t j = 0;
    for (std::size_t i = 0; i < to.size(); ++i) {
      if (n->shape[i] == Dim(1)) continue;
      while (j < src->shape.size() && src->shape[j] == Dim(1)) ++j;
      if (j == src->shape.size() || src->shape[j] != n->shape[i]) return std::nullopt;
      to[i] = static_cast<int>(j++);
    }
    while (j < src->shape.size() && src->shape[j] == Dim(1)) ++j;
    if (j != src->shape.size()) return std::nullopt;
    return to;
  }

  // For an output that is reduce RED through permutes and reshapes that add or drop axes of
  // size 1: for each output axis, the reduce's axis it indexes (-1: one of size 1). None for
  // any other output.
  std::optional<std::vector<int>> stored_through(const Node* red) const {
    if (out_ == red) return std::nullopt;
    std::vector<int> at(out_->shape.size());  // output axis -> axis of the current node
    for (std::size_t i = 0; i < at.size(); ++i) at[i] = out_->shape[i] == Dim(1) ? -1 : static_cast<int>(i);
    for (const Node* n = out_; n != red; n = n->src[0].get()) {
      if (n->op != Op::Permute && n->op != Op::Reshape) return std::nullopt;
      if (materialized_.count(n) && n != out_) return std::nullopt;
      std::vector<int> to(n->shape.size(), -1);
      if (n->op == Op::Permute) {
        for (std::size_t i = 0; i < to.size(); ++i) to[i] = static_cast<int>(n->axes[i]);
      } else if (auto r = unit_reshape_axes(n)) {
        to = std::move(*r);
      } else {
        return std::nullopt;
      }
      for (int& a : at) a = a < 0 ? -1 : to[static_cast<std::size_t>(a)];
    }
    return at;
  }

  // Where the output stores reduce RED's element AT: through the permutation MOVED
  // (stored_through), or in RED's own order.
  ExprId stored_index(const Node* red, const std::optional<std::vector<int>>& moved, const std::vector<ExprId>& at) {
    if (!moved) return linear_index(at, red->shape);
    std::vector<ExprId> o(out_->shape.size());
    for (std::size_t j = 0; j < o.size(); ++j) {
      o[j] = (*moved)[j] < 0 ? k_.constant_int(0) : at[static_cast<std::size_t>((*moved)[j])];
    }
    return linear_index(o, out_->shape);
  }

  // Whether N, an operand of a product (of the product's shape), is the same along AXIS: a chain
  // of movement ops above what it reads broadcasts the axis (an expand from size 1).
  static bool broadcast_along(const Node* n, std::size_t axis) {
    while (n->op == Op::Expand || n->op == Op::Permute || n->op == Op::Reshape) {
      const Node* src = n->src[0].get();
      if (n->op == Op::Expand) {
        if (src->shape[axis] == Dim(1) && n->shape[axis] != Dim(1)) return true;
      } else if (n->op == Op::Permute) {
        axis = static_cast<std::size_t>(n->axes[axis]);
      } else {
        // Only reshapes that add or drop axes of size 1 (the axis keeps its extent).
        auto to = unit_reshape_axes(n);
        if (!to || (*to)[axis] < 0) return false;
        axis = static_cast<std::size_t>((*to)[axis]);
      }
      n = src;
    }
    return false;
  }

  // The output axis of reduce RED that an interchanged build accumulates along: the last one
  // (longer than 1, not reduced) that no reduce computed inline in its terms depends on (the
  // last axis when there are none), or -1.
  std::int32_t row_axis(const Node* red) const {
    // The reduce's axes in the order the output stores them, innermost first.
    std::vector<int> order;
    if (auto moved = stored_through(red)) {
      for (std::size_t j = moved->size(); j-- > 0;) {
        if ((*moved)[j] >= 0) order.push_back((*moved)[j]);
      }
    } else {
      for (std::size_t i = red->shape.size(); i-- > 0;) order.push_back(static_cast<int>(i));
    }
    for (int a : order) {
      const auto i = static_cast<std::size_t>(a);
      if (out_loops_[i] < 0) continue;
      const bool free = std::none_of(inline_indices_.begin(), inline_indices_.end(),
                                     [&](ExprId e) { return passes::uses_loop(k_, e, out_loops_[i]); });
      if (free) return a;
    }
    return -1;
  }

  // Runs F with inline reduces appended to INTO; values computed there are forgotten after it
  // when F computed a reduce inline (their accumulators are in INTO's scope only).
  template <class F>
  void in_scope(std::vector<Stmt>* into, F&& f) {
    std::vector<Stmt>* was = emit_;
    const std::size_t inlined = inline_count_;
    auto saved = memo_;
    emit_ = into;
    f();
    emit_ = was;
    if (inline_count_ != inlined) memo_ = std::move(saved);
  }

  // A row kernel: loops over the rows (the axes the reduces keep), then per row one pass per
  // reduce over the reduced axes, accumulating, then a pass writing the output.
  Lowered build_rows(const std::vector<const Node*>& reduces) {
    Lowered result;
    const tensor::Shape& shape = out_->shape;
    std::vector<bool> reduced(shape.size(), false);
    for (auto a : reduces.front()->axes) reduced[static_cast<std::size_t>(a)] = true;
    std::vector<Stmt>* body = &k_.body;
    std::vector<ExprId> row = open_loops(shape, reduced, result, body);
    Dim cols = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (reduced[i]) cols = cols * shape[i];
    }
    result.work_per_iteration = result.work_per_iteration * cols * Dim(static_cast<std::int64_t>(reduces.size() + 1));
    // Loops over the reduced axes inside `into`; returns the innermost body and the index.
    std::int32_t inner_loop = -1;  // the innermost loop col_loops made
    ExprId inner_extent = -1;
    auto col_loops = [&](std::vector<Stmt>* into, std::vector<ExprId>& at) {
      at = row;
      inner_loop = -1;
      for (std::size_t i = 0; i < shape.size(); ++i) {
        if (!reduced[i] || shape[i] == Dim(1)) continue;
        auto [loop, var] = k_.make_loop(k_.dim(shape[i]));
        inner_loop = loop.var;
        inner_extent = loop.extent;
        into->push_back(std::move(loop));
        into = &into->back().body;
        at[i] = var;
      }
      return into;
    };
    // The last reduce's terms, when the output computes them again (softmax: exp(x - max) for
    // the sum, then exp(x - max) / sum), are kept in a row of scratch as the reduce makes them
    // and read back: one exp per element instead of two (4096 x 4096 on one AVX-512 thread:
    // 23 -> 17.5 ms). A sum's (a max's loop takes lanes, which a store would stop), of a row
    // that fits in 64 KiB of the stack, of terms that cost more than a read.
    const Node* kept = reduces.back()->src[0].get();
    std::int32_t kept_slot = -1;
    if (!gpu_ && reduces.back()->reduce_kind == ReduceKind::Sum && cols.is_const() &&
        cols.value() * static_cast<std::int64_t>(tensor::dtype_size(kept->dtype)) <= 65536 &&
        tensor::dtype_block(kept->dtype) == 1 && inline_work(kept) >= 4 &&
        computed_inline(value_source(out_)).count(kept)) {
      k_.buffers.push_back(BufferParam{kept->dtype, false, cols.value()});
      kept_slot = static_cast<std::int32_t>(k_.buffers.size() - 1);
    }
    // The index of a row's element among the row's: over the reduced axes only.
    auto col_index = [&](const std::vector<ExprId>& at) {
      ExprId flat = k_.constant_int(0);
      Dim stride = 1;
      for (std::size_t i = shape.size(); i-- > 0;) {
        if (!reduced[i] || shape[i] == Dim(1)) continue;
        flat = k_.binary(EOp::Add, flat, k_.binary(EOp::Mul, at[i], k_.dim(stride)));
        stride = stride * shape[i];
      }
      return flat;
    };
    for (const Node* r : reduces) {
      const DType acc_t = acc_dtype(r->dtype);
      std::int32_t acc = define_acc(body, acc_t, r->reduce_kind, reduce_init(r->reduce_kind, r->dtype, acc_t));
      std::vector<ExprId> at;
      std::vector<Stmt>* inner = col_loops(body, at);
      if (kept_slot >= 0 && r == reduces.back()) {
        Stmt keep = store(col_index(at), value(kept, at));
        keep.buffer = kept_slot;
        inner->push_back(keep);
      }
      inner->push_back(update_acc(acc, acc_t, r->reduce_kind, k_.unary(EOp::Cast, value(r->src[0].get(), at), acc_t)));
      // On the CPU a float max adds into lanes (lanes_for).
      if (inner_loop >= 0 && !gpu_) {
        if (auto lanes = lanes_for(r->reduce_kind, inner_loop, inner_extent, acc_t)) result.opts.push_back(*lanes);
      }
      // Read (through the expand) at the row's index, the reduce is its accumulator.
      row_accs_[r] = k_.unary(EOp::Cast, k_.acc_read(acc, acc_t), r->dtype);
    }
    std::vector<ExprId> at;
    std::vector<Stmt>* inner = col_loops(body, at);
    if (kept_slot >= 0) memo_.emplace(std::make_pair(kept, at), k_.load(kept_slot, col_index(at)));
    const ExprId where = linear_index(at, shape);
    inner->push_back(store(where, value(value_source(out_), at)));
    return result;
  }

  // The nodes computing n inline computes: down to what is materialized, and to the row's
  // reduces (a row kernel's accumulators, computed once a row).
  std::unordered_set<const Node*> computed_inline(const Node* n) {
    std::unordered_set<const Node*> seen;
    std::vector<const Node*> todo{n};
    while (!todo.empty()) {
      const Node* x = todo.back();
      todo.pop_back();
      if ((x != out_ && materialized_.count(x)) || x->op == Op::Reduce || !seen.insert(x).second) continue;
      for (const tensor::NodeRef& s : x->src) todo.push_back(s.get());
    }
    return seen;
  }

  // The arithmetic (ops.def's work) of computing n inline.
  int inline_work(const Node* n) {
    int work = 0;
    for (const Node* x : computed_inline(n)) work += tensor::op_info(x->op).work;
    return work;
  }

  // The loops of a blocked kernel (build_online_blocked, build_recompute_blocked): one per axis
  // of SHAPE not skipped (the first parallel), then, for SPANS > 1, one over the spans of the
  // row axis (parallel where no loop before is); BODY ends inside the innermost. Returns the
  // index per axis (0 where skipped), the innermost loop outside the spans (where packs go; -1:
  // none), the span's index (0 for one span) and its loop (-1: none).
  struct SpanLoops {
    std::vector<ExprId> row;
    std::int32_t around = -1;
    ExprId block = -1;
    std::int32_t block_loop = -1;
  };
  SpanLoops open_spans(const tensor::Shape& shape, const std::vector<bool>& skip, std::int64_t spans, Lowered& result,
                       std::vector<Stmt>*& body) {
    SpanLoops out;
    out.row = open_loops(shape, skip, result, body);
    for (const Stmt* st = k_.body.empty() ? nullptr : &k_.body.back(); st != nullptr && st->kind == Stmt::Kind::Loop;
         st = st->body.empty() ? nullptr : &st->body.back()) {
      out.around = st->var;
    }
    out.block = k_.constant_int(0);
    if (spans > 1) {
      auto [loop, var] = k_.make_loop(k_.constant_int(spans));
      if (result.parallel_extent == Dim(1) && out.around < 0) {
        loop.parallel = true;
        result.parallel_extent = spans;
      } else {
        result.work_per_iteration = result.work_per_iteration * Dim(spans);
      }
      out.block_loop = loop.var;
      body->push_back(std::move(loop));
      body = &body->back().body;
      out.block = var;
    }
    return out;
  }

  // An online softmax (schedule::OnlineSoftmax): out = sum over A of W' V', W the softmax
  // E / sum(E), E = exp(X - max(X)), along A. Per row (the output's axes that are neither
  // summed nor the values' own), one pass over A:
  //   m = -inf; l = 0; out[row, :] = 0
  //   for a in A:
  //     x = X[row, a]                       (its own reduce inline: attention's q . k)
  //     mn = max(m, x)                      (the running max, with x)
  //     p = exp(x - mn)                     (0 while mn is -inf: every x so far is -inf)
  //     c = exp(m - mn)                     (1 when the max stays)
  //     l := l c + p
  //     out[row, v] := out[row, v] c + p V'[row, a, v]   for each v of the value axes
  //     m := mn
  //   out[row, v] = out[row, v] / l
  // which is the stored form's sum of (E / l) V' with the division taken out of the sum. The
  // running values are f32 (f64 for f64): the output row accumulates in the output buffer, or
  // for f16 and bf16 in f32 scratch (the value axes' size, per row) until the division.
  Lowered build_online(const schedule::OnlineSoftmax& o) {
    if (!gpu_) {
      if (auto blocked = build_online_blocked(o)) return std::move(*blocked);
    }
    Lowered result;
    const Node* r = o.contraction;
    const tensor::Shape& full = r->src[0]->shape;
    const tensor::Shape& shape = r->shape;
    std::vector<bool> summed(full.size(), false);
    for (auto a : r->axes) summed[static_cast<std::size_t>(a)] = true;
    std::vector<bool> skip(full.size(), false);
    for (std::size_t i = 0; i < full.size(); ++i) skip[i] = summed[i] || o.value_axes[i];
    std::vector<Stmt>* body = &k_.body;
    const std::vector<ExprId> row = open_loops(shape, skip, result, body);
    const DType t = acc_dtype(r->dtype);  // the running output's dtype too
    const DType mt = acc_dtype(o.max->dtype);
    std::int32_t ob = 0;  // where the running output row is
    if (t != r->dtype) {
      Dim width = 1;
      for (std::size_t i = 0; i < full.size(); ++i) width = o.value_axes[i] ? width * full[i] : width;
      TL_CHECK(width.as_const(), "online softmax: f16/bf16 values of symbolic width " + width.str());
      k_.buffers.push_back(BufferParam{t, false, *width.as_const()});
      ob = static_cast<std::int32_t>(k_.buffers.size() - 1);
    }
    const ExprId neg_inf = k_.constant_float(-std::numeric_limits<double>::infinity(), mt);
    const std::int32_t m = define_acc(body, mt, ReduceKind::Max, neg_inf);
    const std::int32_t l = define_acc(body, t, ReduceKind::Sum, k_.constant_float(0, t));
    // Loops over the value axes (a nest of its own, appended to INTO when done); FILL gets the
    // innermost body, the index into the product's shape, and the running output's element
    // (in the output, or in the scratch row).
    auto over_values = [&](std::vector<Stmt>* into, std::vector<ExprId> at, const auto& fill) {
      std::vector<Stmt> loops;
      loops.reserve(full.size());
      ExprId in_row = k_.constant_int(0);
      for (std::size_t i = 0; i < full.size(); ++i) {
        if (!o.value_axes[i] || full[i] == Dim(1)) continue;
        auto [loop, var] = k_.make_loop(k_.dim(full[i]));
        loops.push_back(std::move(loop));
        at[i] = var;
        in_row = k_.binary(EOp::Add, k_.binary(EOp::Mul, in_row, k_.dim(full[i])), var);
      }
      std::vector<ExprId> out_at = at;
      for (std::size_t i = 0; i < full.size(); ++i) {
        if (summed[i]) out_at[i] = k_.constant_int(0);
      }
      std::vector<Stmt>* inner = loops.empty() ? into : &loops.back().body;
      const ExprId here = linear_index(out_at, shape);
      fill(inner, at, here, ob == 0 ? here : in_row);
      nest_into(into, loops);
    };
    auto put = [&](std::vector<Stmt>* inner, std::int32_t buf, ExprId i, ExprId v) {
      Stmt st = store(i, v);
      st.buffer = buf;
      inner->push_back(st);
    };
    over_values(body, row, [&](std::vector<Stmt>* inner, const std::vector<ExprId>&, ExprId, ExprId run) {
      put(inner, ob, run, k_.constant_float(0, t));
    });
    std::vector<ExprId> at = row;
    std::vector<Stmt> pass;  // the loops over A
    pass.reserve(full.size());
    Dim terms = 1;
    for (std::size_t i = 0; i < full.size(); ++i) {
      if (!summed[i] || full[i] == Dim(1)) continue;
      auto [loop, var] = k_.make_loop(k_.dim(full[i]));
      pass.push_back(std::move(loop));
      at[i] = var;
      terms = terms * full[i];
    }
    std::vector<Stmt>* step = pass.empty() ? body : &pass.back().body;
    // The weights' index, below the operand's views.
    std::vector<ExprId> widx = at;
    widx = weights_index(o, widx);
    emit_ = step;
    const ExprId x = value(o.scores, widx);
    const std::int32_t mn =
        define_acc(step, mt, ReduceKind::Max, k_.binary(EOp::Max, k_.acc_read(m, mt), k_.unary(EOp::Cast, x, mt)));
    const ExprId m_new = k_.acc_read(mn, mt), m_old = k_.acc_read(m, mt);
    row_accs_[o.max] = k_.unary(EOp::Cast, m_new, o.max->dtype);
    const ExprId e = value(o.exp, widx);
    row_accs_.erase(o.max);
    const ExprId one = k_.constant_float(1, t), zero_t = k_.constant_float(0, t);
    const ExprId p = k_.where(k_.binary(EOp::Cmpeq, m_new, neg_inf), zero_t, k_.unary(EOp::Cast, e, t));
    // exp(m - mn): E's expression with the score replaced by the old max.
    const ExprId rescaled = substitute(e, x, k_.unary(EOp::Cast, m_old, o.scores->dtype));
    const ExprId c = k_.where(k_.binary(EOp::Cmpeq, m_old, m_new), one, k_.unary(EOp::Cast, rescaled, t));
    step->push_back(set_acc(l, t, k_.binary(EOp::Add, k_.binary(EOp::Mul, k_.acc_read(l, t), c), p)));
    over_values(step, at, [&](std::vector<Stmt>* inner, const std::vector<ExprId>& vat, ExprId, ExprId run) {
      emit_ = inner;
      const ExprId v = k_.unary(EOp::Cast, value(o.values, vat), t);
      const ExprId cur = k_.load(ob, run);
      put(inner, ob, run, k_.binary(EOp::Add, k_.binary(EOp::Mul, cur, c), k_.binary(EOp::Mul, p, v)));
    });
    emit_ = nullptr;
    step->push_back(set_acc(m, mt, m_new));
    nest_into(body, pass);
    over_values(body, row, [&](std::vector<Stmt>* inner, const std::vector<ExprId>&, ExprId here, ExprId run) {
      const ExprId o_row = k_.binary(EOp::Mul, k_.load(ob, run), k_.unary(EOp::Recip, k_.acc_read(l, t), t));
      inner->push_back(store(here, k_.unary(EOp::Cast, o_row, r->dtype)));
    });
    Dim values = 1;
    for (std::size_t i = 0; i < full.size(); ++i) values = o.value_axes[i] ? values * full[i] : values;
    result.work_per_iteration = result.work_per_iteration * terms * (values + Dim(16));
    return result;
  }

  // The CPU's online softmax, in blocks: R rows (queries) at a time against B = 32 or 16 terms
  // of the sum (keys) at a time, so that each key and value row read serves R rows and the
  // running max and sum rescale once per block. Per row block, per key block:
  //   s[r][j] = X[row r, key j]               (its reduce inline: the q . k dot products)
  //   mn[r] = max(m[r], max_j s[r][j]); c[r] = exp(m[r] - mn[r])
  //   p[r][j] = exp(s[r][j] - mn[r]); l[r] = l[r] c[r] + sum_j p[r][j]; m[r] = mn[r]
  //   out[row r, v] = out[row r, v] c[r] + sum_j p[r][j] V'[row r, key j, v]
  // (s, p, m, l and c in scratch), then out / l. Its opts make register tiles of both products
  // (the keys packed per head along the block, [block][d][16], so the 16 keys of a block are
  // one vector; the values' 16-wide column blocks one vector each) and unroll the rows. None
  // (the plain nest instead) unless the product is f32, f16 or bf16 (computed in f32, the
  // output rows in f32 scratch until the last division), the keys one axis a multiple of 16
  // long, the values one axis a multiple of 16 wide, all extents constant.
  static constexpr std::int64_t kOnlineKeys = 16;
  static constexpr std::int64_t kOnlineSpan = 256;
  std::optional<Lowered> build_online_blocked(const schedule::OnlineSoftmax& o) {
    const Node* r = o.contraction;
    const tensor::Shape& full = r->src[0]->shape;
    const tensor::Shape& shape = r->shape;
    auto single = [](DType d) { return d == DType::F32 || d == DType::F16 || d == DType::BF16; };
    if (!single(r->dtype) || !single(o.max->dtype)) return std::nullopt;
    std::vector<bool> summed(full.size(), false);
    for (auto a : r->axes) summed[static_cast<std::size_t>(a)] = true;
    std::optional<std::size_t> kaxis, vaxis, qaxis;
    for (std::size_t i = 0; i < full.size(); ++i) {
      if (!full[i].as_const()) return std::nullopt;
      if (full[i] == Dim(1)) continue;
      if (summed[i]) {
        if (kaxis) return std::nullopt;
        kaxis = i;
      } else if (o.value_axes[i]) {
        if (vaxis) return std::nullopt;
        vaxis = i;
      } else {
        qaxis = i;  // the innermost row axis
      }
    }
    if (!kaxis || !vaxis) return std::nullopt;
    const std::int64_t keys = *full[*kaxis].as_const(), width = *full[*vaxis].as_const();
    if (keys % kOnlineKeys != 0 || width % 16 != 0) return std::nullopt;
    // 32 keys a block where they divide the keys (a third faster at L = 1024 than 16: the
    // rescaling and the block's max come half as often), else 16.
    const std::int64_t bk = keys % (2 * kOnlineKeys) == 0 ? 2 * kOnlineKeys : kOnlineKeys;
    const std::int64_t queries = qaxis ? *full[*qaxis].as_const() : 1;
    const std::int64_t rows = queries % 4 == 0 ? 4 : queries % 2 == 0 ? 2 : 1;
    // Row blocks go through the keys together, kOnlineSpan rows at a time (or as many as there
    // are): a block of keys and values, read once into L1, serves all of them, where one row
    // block alone would stream every head's keys and values from L2 or beyond per 4 rows (at
    // L = 4096, 2 MiB a head; one AVX-512 thread ran it in 1.34 s so, 0.8-1.0 s in spans of
    // 64 to 1024 rows, within this machine's noise of each other).
    std::int64_t span = rows;
    while (span * 2 <= kOnlineSpan && queries % (span * 2) == 0) span *= 2;
    Lowered result;
    Opts opts;
    auto c = [&](std::int64_t v) { return k_.constant_int(v); };
    // The loops over the rows but the qaxis axis (the first parallel), then the row blocks.
    std::vector<bool> skip(full.size(), false);
    for (std::size_t i = 0; i < full.size(); ++i) skip[i] = summed[i] || o.value_axes[i] || (qaxis && i == *qaxis);
    std::vector<Stmt>* body = &k_.body;
    // (around: the loop whose body packs the keys, the innermost row loop; block: the span's
    // index along the query axis)
    const SpanLoops spans = open_spans(shape, skip, queries / span, result, body);
    const std::vector<ExprId>& row = spans.row;
    const std::int32_t around = spans.around, block_loop = spans.block_loop;
    const ExprId block = spans.block;
    const DType t = DType::F32;
    auto scratch = [&](std::int64_t n) {
      k_.buffers.push_back(BufferParam{t, false, n});
      return static_cast<std::int32_t>(k_.buffers.size() - 1);
    };
    const std::int32_t sb = scratch(rows * bk), pb = scratch(rows * bk);
    const std::int32_t mb = scratch(span), lb = scratch(span), cb = scratch(span);
    // The running output rows: in the output itself when it is f32, else in f32 scratch.
    const std::int32_t ob = r->dtype == t ? 0 : scratch(span * width);
    const ExprId neg_inf = k_.constant_float(-std::numeric_limits<double>::infinity(), t);
    const ExprId zero_t = k_.constant_float(0, t), one = k_.constant_float(1, t);
    // A loop over [0, N) as a statement to fill, and its variable.
    auto loop_of = [&](std::int64_t n) { return k_.make_loop(c(n)); };
    // Index of row RR of the span (in the product's shape), with the key and value axes at KEY_AT, VALUE_AT.
    auto at = [&](ExprId rr, ExprId key_at, ExprId value_at) {
      std::vector<ExprId> idx = row;
      if (qaxis) idx[*qaxis] = k_.binary(EOp::Add, k_.binary(EOp::Mul, block, c(span)), rr);
      idx[*kaxis] = key_at;
      idx[*vaxis] = value_at;
      return idx;
    };
    auto out_index = [&](ExprId rr, ExprId v) { return linear_index(at(rr, c(0), v), shape); };
    // Where span row RR's running output at V is.
    auto run_index = [&](ExprId rr, ExprId v) {
      return ob == 0 ? out_index(rr, v) : k_.binary(EOp::Add, k_.binary(EOp::Mul, rr, c(width)), v);
    };
    auto put = [&](std::vector<Stmt>* into, std::int32_t buf, ExprId i, ExprId v) {
      Stmt st = store(i, v);
      st.buffer = buf;
      into->push_back(st);
    };
    // Per row: running max -inf, sum 0, output row 0.
    {
      auto [rl, rv] = loop_of(span);
      put(&rl.body, mb, rv, neg_inf);
      put(&rl.body, lb, rv, zero_t);
      auto [vl, vv] = loop_of(width);
      put(&vl.body, ob, run_index(rv, vv), zero_t);
      rl.body.push_back(std::move(vl));
      body->push_back(std::move(rl));
    }
    auto [kl_outer, kv] = loop_of(keys / bk);
    const std::int32_t key_loop = kl_outer.var;
    // The row blocks of the span, inside each key block: row RV of block BV is span row BV R + RV.
    auto [kl, bv] = loop_of(span / rows);
    const std::int32_t span_loop = kl.var;
    auto in_span = [&, bv = bv](ExprId rv) { return k_.binary(EOp::Add, k_.binary(EOp::Mul, bv, c(rows)), rv); };
    auto key_of = [&, kv = kv](ExprId j) { return k_.binary(EOp::Add, k_.binary(EOp::Mul, kv, c(bk)), j); };
    // Element (row R, key J) of the block's scratch (scores s, weights p).
    auto in_block = [&](ExprId r, ExprId j) { return k_.binary(EOp::Add, k_.binary(EOp::Mul, r, c(bk)), j); };
    // The block's scores: s[r][j] = X (its reduce inline).
    std::vector<Stmt> block_body;  // per row block and key block
    ExprId masked = -1;            // true where X is -inf for every row and key of the block
    std::int32_t s_rows = -1, s_keys = -1;
    std::vector<std::int32_t> inline_loops;  // the scores' reduce loops
    {
      auto [rl, rv] = loop_of(rows);
      auto [jl, jv] = loop_of(bk);
      s_rows = rl.var;
      s_keys = jl.var;
      std::vector<ExprId> widx = at(in_span(rv), key_of(jv), c(0));
      widx = weights_index(o, widx);
      emit_ = &jl.body;
      const std::int32_t first_inline = k_.loop_count();
      const ExprId x = k_.unary(EOp::Cast, value(o.scores, widx), t);
      for (std::int32_t l = first_inline; l < k_.loop_count(); ++l) inline_loops.push_back(l);
      emit_ = nullptr;
      masked = masked_everywhere(x, {{rv, rows}, {jv, bk}});
      put(&jl.body, sb, in_block(rv, jv), x);
      rl.body.push_back(std::move(jl));
      block_body.push_back(std::move(rl));
    }
    // The block's max, exponentials and sum, per row.
    std::int32_t max_keys = -1;
    {
      auto [rl, rv] = loop_of(rows);
      const ExprId sr = in_span(rv);
      const ExprId m_old = k_.load(mb, sr);
      const std::int32_t bm = define_acc(&rl.body, t, ReduceKind::Max, neg_inf);
      auto [jl, jv] = loop_of(bk);
      max_keys = jl.var;
      const ExprId s_at = k_.load(sb, in_block(rv, jv));
      jl.body.push_back(update_acc(bm, t, ReduceKind::Max, s_at));
      rl.body.push_back(std::move(jl));
      const std::int32_t mn = define_acc(&rl.body, t, ReduceKind::Max, k_.binary(EOp::Max, m_old, k_.acc_read(bm, t)));
      const ExprId m_new = k_.acc_read(mn, t);
      // E at (score s, max mn): the exponential as the graph has it, over a stand-in score.
      auto exp_at = [&](ExprId score, std::vector<ExprId> widx) {
        widx = weights_index(o, widx);
        memo_.clear();
        row_accs_[o.max] = k_.unary(EOp::Cast, m_new, o.max->dtype);
        memo_[{o.scores, widx}] = k_.unary(EOp::Cast, score, o.scores->dtype);
        const ExprId e = k_.unary(EOp::Cast, value(o.exp, widx), t);
        row_accs_.erase(o.max);
        memo_.clear();
        return e;
      };
      const ExprId rescale = exp_at(m_old, at(sr, c(0), c(0)));
      const ExprId cc = k_.where(k_.binary(EOp::Cmpeq, m_old, m_new), one, rescale);
      const std::int32_t bs = define_acc(&rl.body, t, ReduceKind::Sum, zero_t);
      auto [el, ev] = loop_of(bk);
      const ExprId here = in_block(rv, ev);
      const ExprId p =
          k_.where(k_.binary(EOp::Cmpeq, m_new, neg_inf), zero_t, exp_at(k_.load(sb, here), at(sr, key_of(ev), c(0))));
      put(&el.body, pb, here, p);
      el.body.push_back(update_acc(bs, t, ReduceKind::Sum, p));
      rl.body.push_back(std::move(el));
      put(&rl.body, lb, sr, k_.binary(EOp::Add, k_.binary(EOp::Mul, k_.load(lb, sr), cc), k_.acc_read(bs, t)));
      put(&rl.body, cb, sr, cc);
      put(&rl.body, mb, sr, m_new);
      block_body.push_back(std::move(rl));
    }
    // The block's product with the values: out[r][v] = out[r][v] c[r] + sum_j p[r][j] V'.
    std::int32_t p_rows = -1, p_cols = -1, p_lanes = -1;
    {
      auto [rl, rv] = loop_of(rows);
      auto [v0l, v0] = loop_of(width / 16);
      auto [v1l, v1] = loop_of(16);
      p_rows = rl.var;
      p_cols = v0l.var;
      p_lanes = v1l.var;
      const ExprId vat = k_.binary(EOp::Add, k_.binary(EOp::Mul, v0, c(16)), v1);
      const std::int32_t acc = define_acc(&v1l.body, t, ReduceKind::Sum, zero_t);
      auto [jl, jv] = loop_of(bk);
      emit_ = &jl.body;
      const ExprId vv = k_.unary(EOp::Cast, value(o.values, at(in_span(rv), key_of(jv), vat)), t);
      emit_ = nullptr;
      const ExprId pw = k_.load(pb, in_block(rv, jv));
      jl.body.push_back(update_acc(acc, t, ReduceKind::Sum, k_.binary(EOp::Mul, pw, vv)));
      v1l.body.push_back(std::move(jl));
      const ExprId oi = run_index(in_span(rv), vat);
      put(&v1l.body, ob, oi,
          k_.binary(EOp::Add, k_.binary(EOp::Mul, k_.load(ob, oi), k_.load(cb, in_span(rv))), k_.acc_read(acc, t)));
      v0l.body.push_back(std::move(v1l));
      rl.body.push_back(std::move(v0l));
      block_body.push_back(std::move(rl));
    }
    if (masked >= 0) {
      // A block that the mask hides from every row of the row block (a causal mask's keys after
      // the rows, a window's outside it) is skipped: it would add nothing (p = 0, c = 1).
      kl.body.push_back(gated(masked, std::move(block_body)));
    } else {
      for (Stmt& st : block_body) kl.body.push_back(std::move(st));
    }
    kl_outer.body.push_back(std::move(kl));
    body->push_back(std::move(kl_outer));
    // out / l.
    {
      auto [rl, rv] = loop_of(span);
      auto [vl, vv] = loop_of(width);
      const ExprId ri = run_index(rv, vv);
      const ExprId o_row = k_.binary(EOp::Mul, k_.load(ob, ri), k_.unary(EOp::Recip, k_.load(lb, rv), t));
      put(&vl.body, 0, out_index(rv, vv), k_.unary(EOp::Cast, o_row, r->dtype));
      rl.body.push_back(std::move(vl));
      body->push_back(std::move(rl));
    }
    result.work_per_iteration = result.work_per_iteration * Dim(span) * Dim(keys) * Dim(width + 16);
    // The keys of each head packed once for its row blocks; register tiles of both products.
    if (!inline_loops.empty()) {
      // [key block][reduce...][16 keys]: a block's keys side by side, one vector per term.
      std::vector<std::int32_t> order{key_loop};
      order.insert(order.end(), inline_loops.begin(), inline_loops.end());
      order.push_back(s_keys);
      Kernel trial = k_;
      try {
        const std::int32_t rows_loop = block_loop >= 0 ? block_loop : span_loop;
        pack_reads(trial, around, rows_loop, order);
        opts.push_back(Opt::pack(around, rows_loop, order));
      } catch (const ConditionError&) {
        // (too large to pack, say: the keys are read where they are)
      }
    }
    opts.push_back(Opt::upcast(s_keys));
    opts.push_back(Opt::upcast(s_rows));
    opts.push_back(Opt::lanes(max_keys, bk));  // the block's max as one vector max
    opts.push_back(Opt::upcast(p_lanes));
    opts.push_back(Opt::upcast(p_cols));
    opts.push_back(Opt::upcast(p_rows));
    result.opts = std::move(opts);
    return result;
  }

  // How build_recompute_blocked computes a reduce whose terms compute reduces inline: the one
  // axis summed (the terms), a value axis along which one operand of the product is the same
  // (the weight; the other, the values, varies along it) or none (each term one value, summed
  // or maxed), the innermost other axis (the rows, taken in blocks) and the block sizes.
  struct RecomputePlan {
    std::size_t terms_axis = 0;
    std::optional<std::size_t> value_axis, row_axis;
    const Node* weight = nullptr;  // a term's weight (with a value axis) or value (without)
    const Node* values = nullptr;  // with a value axis: the other operand
    std::int64_t terms = 0, width = 0, queries = 1, rows = 1, block = 16, span = 1;
  };
  std::optional<RecomputePlan> recompute_plan(const Node* red, std::int32_t value_hint) const {
    if (red->dtype != DType::F32 || out_->dtype != DType::F32 || red->reduce_kind == ReduceKind::Prod) {
      return std::nullopt;
    }
    // (An output that moves the reduce's elements is stored through them, or not taken.)
    if (out_ != red && tensor::op_info(out_->op).group == tensor::OpGroup::Movement && !stored_through(red)) {
      return std::nullopt;
    }
    const Node* src = red->src[0].get();
    const tensor::Shape& full = src->shape;
    std::vector<bool> summed(full.size(), false);
    for (auto a : red->axes) summed[static_cast<std::size_t>(a)] = true;
    RecomputePlan p;
    int term_axes = 0;
    for (std::size_t i = 0; i < full.size(); ++i) {
      if (!full[i].as_const()) return std::nullopt;
      if (summed[i] && full[i] != Dim(1)) {
        ++term_axes;
        p.terms_axis = i;
      }
    }
    if (term_axes != 1) return std::nullopt;
    p.terms = *full[p.terms_axis].as_const();
    if (p.terms % 16 != 0) return std::nullopt;
    p.block = p.terms % 32 == 0 ? 32 : 16;
    p.weight = src;
    if (red->reduce_kind == ReduceKind::Sum && src->op == Op::Mul && value_hint >= 0) {
      const auto v = static_cast<std::size_t>(value_hint);
      for (int side = 0; side < 2; ++side) {
        const Node* a = src->src[static_cast<std::size_t>(side)].get();
        const Node* b = src->src[static_cast<std::size_t>(1 - side)].get();
        if (!broadcast_along(a, v) || broadcast_along(b, v)) continue;
        // (A weight the same along an axis 16 does not divide: the row-by-row form, which
        // computes it once per term, not once per element of the axis.)
        if (*full[v].as_const() % 16 != 0) return std::nullopt;
        p.value_axis = v;
        p.weight = a;
        p.values = b;
        p.width = *full[v].as_const();
        break;
      }
    }
    for (std::size_t i = 0; i < full.size(); ++i) {
      if (!summed[i] && i != p.value_axis.value_or(full.size()) && full[i] != Dim(1)) p.row_axis = i;
    }
    p.queries = p.row_axis ? *full[*p.row_axis].as_const() : 1;
    p.rows = p.queries % 4 == 0 ? 4 : p.queries % 2 == 0 ? 2 : 1;
    p.span = p.rows;
    while (p.span * 2 <= kOnlineSpan && p.queries % (p.span * 2) == 0) p.span *= 2;
    return p;
  }

  // A CPU reduce whose terms compute reduces inline (schedule.cpp's recompute_softmax: the
  // kernels of attention's backward that recompute the weights), in blocks, as
  // build_online_blocked runs the forward: per block of R rows and B terms,
  //   w[r][t] = the term's weight (its inline reduces: q . k, dO . v)
  //   out[row r, v] += sum_t w[r][t] values[row r, term t, v]      (with a value axis)
  //   out[row r] = out[row r] (+ or max) (sum or max)_t w[r][t]   (without)
  // with row blocks going through the terms in spans of up to kOnlineSpan rows. Its opts pack
  // the term side of each inline reduce [block][axis][B] (a block's terms side by side, one
  // vector per element of the reduced axis) and make register tiles of the weights (R x B) and
  // of the product with the values (R x 16-wide column blocks).
  Lowered build_recompute_blocked(const Node* red, const RecomputePlan& p) {
    const tensor::Shape& shape = red->shape;
    const tensor::Shape& full = red->src[0]->shape;
    const std::optional<std::vector<int>> moved = stored_through(red);
    Lowered result;
    Opts opts;
    auto c = [&](std::int64_t v) { return k_.constant_int(v); };
    std::vector<bool> skip(full.size(), false);
    for (auto a : red->axes) skip[static_cast<std::size_t>(a)] = true;
    if (p.value_axis) skip[*p.value_axis] = true;
    if (p.row_axis) skip[*p.row_axis] = true;
    std::vector<Stmt>* body = &k_.body;
    const SpanLoops spans = open_spans(shape, skip, p.queries / p.span, result, body);
    const std::vector<ExprId>& row = spans.row;
    const std::int32_t around = spans.around, block_loop = spans.block_loop;
    const ExprId block = spans.block;
    const DType t = DType::F32;
    const ReduceKind kind = red->reduce_kind;
    const std::int64_t rows = p.rows, bt = p.block;
    k_.buffers.push_back(BufferParam{t, false, rows * bt});
    const auto wb = static_cast<std::int32_t>(k_.buffers.size() - 1);
    auto loop_of = [&](std::int64_t n) { return k_.make_loop(c(n)); };
    // Index (in the product's shape) of span row RR, with the terms and value axes at TERM, VALUE.
    auto at = [&](ExprId rr, ExprId term, ExprId value) {
      std::vector<ExprId> idx = row;
      if (p.row_axis) idx[*p.row_axis] = k_.binary(EOp::Add, k_.binary(EOp::Mul, block, c(p.span)), rr);
      idx[p.terms_axis] = term;
      if (p.value_axis) idx[*p.value_axis] = value;
      return idx;
    };
    auto out_index = [&](ExprId rr, ExprId value) { return stored_index(red, moved, at(rr, c(0), value)); };
    auto put = [&](std::vector<Stmt>* into, std::int32_t buf, ExprId i, ExprId v) {
      Stmt st = store(i, v);
      st.buffer = buf;
      into->push_back(st);
    };
    const ExprId identity = reduce_init(kind, t, t);
    {
      auto rl_loop = loop_of(p.span);
      Stmt& rl = rl_loop.first;
      const ExprId rv = rl_loop.second;
      if (p.value_axis) {
        auto vl_loop = loop_of(p.width);
        Stmt& vl = vl_loop.first;
        const ExprId vv = vl_loop.second;
        put(&vl.body, 0, out_index(rv, vv), identity);
        rl.body.push_back(std::move(vl));
      } else {
        put(&rl.body, 0, out_index(rv, c(0)), identity);
      }
      body->push_back(std::move(rl));
    }
    auto tl_outer_loop = loop_of(p.terms / bt);
    Stmt& tl_outer = tl_outer_loop.first;
    const ExprId tv = tl_outer_loop.second;
    const std::int32_t term_loop = tl_outer.var;
    auto sl_loop = loop_of(p.span / rows);
    Stmt& sl = sl_loop.first;
    const ExprId bv = sl_loop.second;
    const std::int32_t span_loop = sl.var;
    auto in_span = [&, bv = bv](ExprId rv) { return k_.binary(EOp::Add, k_.binary(EOp::Mul, bv, c(rows)), rv); };
    auto term_of = [&, tv = tv](ExprId j) { return k_.binary(EOp::Add, k_.binary(EOp::Mul, tv, c(bt)), j); };
    auto in_block = [&](ExprId r, ExprId j) { return k_.binary(EOp::Add, k_.binary(EOp::Mul, r, c(bt)), j); };
    // The block's weights. First their inline reduces (the dot products), each into scratch
    // [r][t], their loops in groups (one per reduce); then the weights from those, in a loop
    // nest of their own, which vectorizes along the terms (computed where the dot products are,
    // the block's unrolled copies vectorized the exponentials across its 4 rows).
    std::vector<std::vector<std::int32_t>> groups;
    std::int32_t w_rows = -1, w_terms = -1;
    std::optional<Stmt> second;  // the weights' nest, when split
    std::vector<Stmt> blk;       // the block's statements
    ExprId w_final = -1;         // the weight, in the loops (over rows, terms) of the nest computing it
    std::int32_t box_rows = -1, box_terms = -1;
    {
      auto rl_loop = loop_of(rows);
      Stmt& rl = rl_loop.first;
      const ExprId rv = rl_loop.second;
      auto jl_loop = loop_of(bt);
      Stmt& jl = jl_loop.first;
      const ExprId jv = jl_loop.second;
      w_rows = rl.var;
      w_terms = jl.var;
      std::vector<std::pair<const Node*, ExprId>> tops;
      inline_groups_ = &groups;
      inline_tops_ = &tops;
      tops_scope_ = &jl.body;
      in_scope(&jl.body, [&] {
        const ExprId w = k_.unary(EOp::Cast, value(p.weight, at(in_span(rv), term_of(jv), c(0))), t);
        std::set<const Node*> nodes;
        for (const auto& [n, v] : tops) nodes.insert(n);
        const bool split =
            !tops.empty() && nodes.size() == tops.size() &&
            std::all_of(tops.begin(), tops.end(), [](const auto& x) { return x.first->dtype == DType::F32; });
        if (!split) {
          put(&jl.body, wb, in_block(rv, jv), w);
          w_final = w;
          box_rows = rl.var;
          box_terms = jl.var;
          return;
        }
        std::map<const Node*, ExprId> loads;  // each reduce's value in the second nest
        auto rl2_loop = loop_of(rows);
        Stmt& rl2 = rl2_loop.first;
        const ExprId rv2 = rl2_loop.second;
        auto jl2_loop = loop_of(bt);
        Stmt& jl2 = jl2_loop.first;
        const ExprId jv2 = jl2_loop.second;
        for (const auto& [n, v] : tops) {
          k_.buffers.push_back(BufferParam{t, false, rows * bt});
          const auto sb = static_cast<std::int32_t>(k_.buffers.size() - 1);
          put(&jl.body, sb, in_block(rv, jv), v);
          loads[n] = k_.load(sb, in_block(rv2, jv2));
        }
        inline_values_ = &loads;
        ExprId w2 = -1;
        in_scope(&jl2.body,
                 [&] { w2 = k_.unary(EOp::Cast, value(p.weight, at(in_span(rv2), term_of(jv2), c(0))), t); });
        inline_values_ = nullptr;
        put(&jl2.body, wb, in_block(rv2, jv2), w2);
        w_final = w2;
        box_rows = rl2.var;
        box_terms = jl2.var;
        rl2.body.push_back(std::move(jl2));
        second = std::move(rl2);
      });
      inline_groups_ = nullptr;
      inline_tops_ = nullptr;
      tops_scope_ = nullptr;
      rl.body.push_back(std::move(jl));
      blk.push_back(std::move(rl));
      if (second) blk.push_back(std::move(*second));
    }
    std::int32_t p_rows = -1, p_cols = -1, p_lanes = -1, p_terms = -1;
    if (p.value_axis) {
      // out[row r, v] += sum_t w[r][t] values[row r, term t, v], in 16-wide column blocks.
      auto rl_loop = loop_of(rows);
      Stmt& rl = rl_loop.first;
      const ExprId rv = rl_loop.second;
      auto v0l_loop = loop_of(p.width / 16);
      Stmt& v0l = v0l_loop.first;
      const ExprId v0 = v0l_loop.second;
      auto v1l_loop = loop_of(16);
      Stmt& v1l = v1l_loop.first;
      const ExprId v1 = v1l_loop.second;
      p_rows = rl.var;
      p_cols = v0l.var;
      p_lanes = v1l.var;
      const ExprId vat = k_.binary(EOp::Add, k_.binary(EOp::Mul, v0, c(16)), v1);
      const std::int32_t acc = define_acc(&v1l.body, t, ReduceKind::Sum, k_.constant_float(0, t));
      auto jl_loop = loop_of(bt);
      Stmt& jl = jl_loop.first;
      const ExprId jv = jl_loop.second;
      ExprId vv = -1;
      in_scope(&jl.body, [&] { vv = k_.unary(EOp::Cast, value(p.values, at(in_span(rv), term_of(jv), vat)), t); });
      jl.body.push_back(update_acc(acc, t, ReduceKind::Sum, k_.binary(EOp::Mul, k_.load(wb, in_block(rv, jv)), vv)));
      v1l.body.push_back(std::move(jl));
      const ExprId oi = out_index(in_span(rv), vat);
      v1l.body.push_back(store(oi, k_.binary(EOp::Add, k_.load(0, oi), k_.acc_read(acc, t))));
      v0l.body.push_back(std::move(v1l));
      rl.body.push_back(std::move(v0l));
      blk.push_back(std::move(rl));
    } else {
      // out[row r] = out[row r] op (op_t w[r][t]).
      auto rl_loop = loop_of(rows);
      Stmt& rl = rl_loop.first;
      const ExprId rv = rl_loop.second;
      p_rows = rl.var;
      const std::int32_t acc = define_acc(&rl.body, t, kind, identity);
      auto jl_loop = loop_of(bt);
      Stmt& jl = jl_loop.first;
      const ExprId jv = jl_loop.second;
      p_terms = jl.var;
      jl.body.push_back(update_acc(acc, t, kind, k_.load(wb, in_block(rv, jv))));
      rl.body.push_back(std::move(jl));
      const ExprId oi = out_index(in_span(rv), c(0));
      const ExprId a = k_.acc_read(acc, t), cur = k_.load(0, oi);
      rl.body.push_back(store(oi, kind == ReduceKind::Max ? k_.binary(EOp::Max, cur, a) : k_.binary(EOp::Add, cur, a)));
      blk.push_back(std::move(rl));
    }
    skip_hidden_blocks(sl.body, blk, w_final, kind, {{box_rows, rows}, {box_terms, bt}}, wb);
    tl_outer.body.push_back(std::move(sl));
    body->push_back(std::move(tl_outer));
    if (out_ != red && !moved) {
      // An epilogue (the loss's product with the output, say), once the span's rows are summed:
      // one element per reduce output, in the same order, so it reads each from the output.
      auto rl_loop = loop_of(p.span);
      Stmt& rl = rl_loop.first;
      const ExprId rv = rl_loop.second;
      std::vector<Stmt>* into = &rl.body;
      std::optional<Stmt> vl;
      ExprId value_at = c(0);
      if (p.value_axis) {
        auto l_loop = loop_of(p.width);
        Stmt& l = l_loop.first;
        const ExprId v = l_loop.second;
        vl = std::move(l);
        value_at = v;
        into = &vl->body;
      }
      const ExprId oi = linear_index(at(rv, c(0), value_at), shape);
      fused_reduce_ = red;
      fused_value_ = k_.load(0, oi);
      ExprId ev = -1;
      in_scope(into, [&] { ev = value(value_source(out_), unravel(oi, out_->shape)); });
      into->push_back(store(oi, ev));
      if (vl) rl.body.push_back(std::move(*vl));
      body->push_back(std::move(rl));
    }
    result.work_per_iteration = result.work_per_iteration * Dim(p.span) * Dim(p.terms) * Dim(p.width + 16);
    // Each inline reduce's term side packed once per head for all row blocks: [block][axis][B].
    Kernel trial = k_;
    const std::int32_t rows_loop = block_loop >= 0 ? block_loop : span_loop;
    for (const std::vector<std::int32_t>& g : groups) {
      std::vector<std::int32_t> order{term_loop};
      order.insert(order.end(), g.begin(), g.end());
      order.push_back(w_terms);
      Kernel next = trial;
      try {
        pack_reads(next, around, rows_loop, order);
        opts.push_back(Opt::pack(around, rows_loop, order));
        trial = std::move(next);
      } catch (const ConditionError&) {
        // (nothing to pack, or too large: read where it is)
      }
    }
    opts.push_back(Opt::upcast(w_terms));
    opts.push_back(Opt::upcast(w_rows));
    if (p.value_axis) {
      opts.push_back(Opt::upcast(p_lanes));
      opts.push_back(Opt::upcast(p_cols));
      opts.push_back(Opt::upcast(p_rows));
    } else {
      opts.push_back(Opt::lanes(p_terms, bt));
      opts.push_back(Opt::upcast(p_rows));
    }
    result.opts = std::move(opts);
    return result;
  }

  // Masks built from index comparisons (causal, sliding windows: where(i - j < w, s, -inf)).
  // An integer expression as a linear form over loop and symbolic variables, when it is one
  // and computes it exactly: sums, negations and constant multiples, through casts, in signed
  // types whose range holds every value the form takes as the loops run (an unsigned
  // difference wraps, a cast to i8 of 160 is -96: such masks are not analysed).
  struct IntLinear {
    std::map<ExprId, std::int64_t> terms;  // variable -> coefficient
    std::int64_t c = 0;
  };
  std::optional<IntLinear> int_linear(ExprId e) const {
    auto l = int_linear_raw(e);
    if (!l || !exact_in(*l, k_.expr(e).dtype)) return std::nullopt;
    return l;
  }
  // Whether every value of L lies in signed integer type T (i64: index arithmetic, exact).
  bool exact_in(const IntLinear& l, DType t) const {
    if (tensor::dtype_category(t) != tensor::DCat::Signed) return false;
    const int bits = tensor::dtype_bits(t);
    if (bits >= 64) return true;
    // Bounds from the loops' ranges (|values| stay far below 2^62 for shapes that fit memory).
    __int128 lo = l.c, hi = l.c;
    for (auto [v, k] : l.terms) {
      const Expr& x = k_.expr(v);
      if (x.op != EOp::LoopVar) return false;  // a symbolic size: unbounded here
      const Range r = k_.range(v);
      if (!r.hi) return false;
      const __int128 a = static_cast<__int128>(k) * r.lo, b = static_cast<__int128>(k) * *r.hi;
      lo += std::min(a, b);
      hi += std::max(a, b);
    }
    const __int128 min = -(static_cast<__int128>(1) << (bits - 1)), max = (static_cast<__int128>(1) << (bits - 1)) - 1;
    return lo >= min && hi <= max;
  }
  std::optional<IntLinear> int_linear_raw(ExprId e) const {
    const Expr x = k_.expr(e);
    if (tensor::is_float(x.dtype) || x.dtype == DType::Bool) return std::nullopt;
    IntLinear out;
    if (x.op == EOp::Const) {
      out.c = x.ival;
      return out;
    }
    if (x.op == EOp::LoopVar || x.op == EOp::SymVar) {
      out.terms[e] = 1;
      return out;
    }
    if (x.op == EOp::Cast) {
      const DType from = k_.expr(x.src[0]).dtype;
      if (tensor::is_float(from) || from == DType::Bool) return std::nullopt;
      return int_linear(x.src[0]);  // exact in its own type, and checked in this one by the caller
    }
    if (x.op == EOp::Neg) {
      auto a = int_linear(x.src[0]);
      if (!a) return std::nullopt;
      for (auto& [v, k] : a->terms) k = -k;
      a->c = -a->c;
      return a;
    }
    if (x.op == EOp::Add) {
      auto a = int_linear(x.src[0]), b = int_linear(x.src[1]);
      if (!a || !b) return std::nullopt;
      for (auto [v, k] : b->terms) a->terms[v] += k;
      a->c += b->c;
      return a;
    }
    if (x.op == EOp::Mul) {
      for (int side = 0; side < 2; ++side) {
        const Expr& f = k_.expr(x.src[side]);
        if (f.op != EOp::Const) continue;
        auto a = int_linear(x.src[1 - side]);
        if (!a) return std::nullopt;
        for (auto& [v, k] : a->terms) k *= f.ival;
        a->c *= f.ival;
        return a;
      }
    }
    return std::nullopt;
  }

  // The least (LEAST) or greatest value of linear form L as the loops of BOX (variable ->
  // extent) run, the other variables as they are: an i64 expression.
  ExprId linear_bound(const IntLinear& l, const std::map<ExprId, std::int64_t>& box, bool least) {
    std::int64_t c = l.c;
    ExprId out = -1;
    for (auto [v, k] : l.terms) {
      if (auto it = box.find(v); it != box.end()) {
        const std::int64_t far = k * (it->second - 1);
        c += least ? std::min<std::int64_t>(0, far) : std::max<std::int64_t>(0, far);
        continue;
      }
      const ExprId term = k_.binary(EOp::Mul, k_.unary(EOp::Cast, v, DType::I64), k_.constant_int(k));
      out = out < 0 ? term : k_.binary(EOp::Add, out, term);
    }
    const ExprId cc = k_.constant_int(c);
    return out < 0 ? cc : k_.binary(EOp::Add, out, cc);
  }

  // Bool expressions saying that bool expression E is false (never) and true (always) for every
  // point of BOX; -1 where that cannot be told.
  std::pair<ExprId, ExprId> truth_over(ExprId e, const std::map<ExprId, std::int64_t>& box) {
    const Expr x = k_.expr(e);
    const ExprId no = -1;
    auto neg = [&](ExprId b) { return k_.binary(EOp::Cmpeq, b, k_.constant_bool(false)); };
    auto both = [&](ExprId a, ExprId b) { return a < 0 || b < 0 ? no : k_.binary(EOp::And, a, b); };
    auto either = [&](ExprId a, ExprId b) { return a < 0 ? b : b < 0 ? a : k_.binary(EOp::Or, a, b); };
    if (x.op == EOp::Const && x.dtype == DType::Bool) {
      return {k_.constant_bool(x.ival == 0), k_.constant_bool(x.ival != 0)};
    }
    if (x.op == EOp::Cmplt || x.op == EOp::Cmpeq) {
      auto a = int_linear(x.src[0]), b = int_linear(x.src[1]);
      if (!a || !b) return {no, no};
      for (auto [v, k] : b->terms) a->terms[v] -= k;
      a->c -= b->c;
      const ExprId lo = linear_bound(*a, box, true), hi = linear_bound(*a, box, false);
      const ExprId zero = k_.constant_int(0);
      if (x.op == EOp::Cmplt) return {neg(k_.binary(EOp::Cmplt, lo, zero)), k_.binary(EOp::Cmplt, hi, zero)};
      return {k_.binary(EOp::Or, k_.binary(EOp::Cmplt, hi, zero), k_.binary(EOp::Cmplt, zero, lo)), no};
    }
    if (x.op == EOp::Xor) {
      for (int side = 0; side < 2; ++side) {
        const Expr& f = k_.expr(x.src[side]);
        if (f.op != EOp::Const) continue;
        auto [never, always] = truth_over(x.src[1 - side], box);
        return f.ival != 0 ? std::pair{always, never} : std::pair{never, always};
      }
      return {no, no};
    }
    if (x.op == EOp::And || x.op == EOp::Or) {
      auto [n0, a0] = truth_over(x.src[0], box);
      auto [n1, a1] = truth_over(x.src[1], box);
      if (x.op == EOp::And) return {either(n0, n1), both(a0, a1)};
      return {both(n0, n1), either(a0, a1)};
    }
    if (x.op == EOp::Where && x.dtype == DType::Bool) {
      auto [nc, ac] = truth_over(x.src[0], box);
      auto [na, aa] = truth_over(x.src[1], box);
      auto [nb, ab] = truth_over(x.src[2], box);
      return {either(either(both(ac, na), both(nc, nb)), both(na, nb)),
              either(either(both(ac, aa), both(nc, ab)), both(aa, ab))};
    }
    return {no, no};
  }

  // A bool expression true where float X (a score) is -inf at every point of BOX because a mask
  // made it so (where(C, s, -inf) with C false everywhere, or where(C, -inf, s) with C true);
  // -1 when no such mask is seen.
  ExprId masked_everywhere(ExprId x, const std::map<ExprId, std::int64_t>& box) {
    for (;;) {
      const Expr e = k_.expr(x);
      if (e.op != EOp::Cast || !tensor::is_float(k_.expr(e.src[0]).dtype)) break;
      x = e.src[0];
    }
    const Expr e = k_.expr(x);
    if (e.op != EOp::Where) return -1;
    auto minus_inf = [&](ExprId id) {
      const Expr& v = k_.expr(id);
      return v.op == EOp::Const && tensor::is_float(v.dtype) && std::isinf(v.fval) && v.fval < 0;
    };
    auto [never, always] = truth_over(e.src[0], box);
    ExprId here = -1;
    if (minus_inf(e.src[2])) {
      here = never;
      const ExprId inner = masked_everywhere(e.src[1], box);
      here = here < 0 ? inner : inner < 0 ? here : k_.binary(EOp::Or, here, inner);
    } else if (minus_inf(e.src[1])) {
      here = always;
      const ExprId inner = masked_everywhere(e.src[2], box);
      here = here < 0 ? inner : inner < 0 ? here : k_.binary(EOp::Or, here, inner);
    }
    return here;
  }

  // What a weight of build_recompute_blocked is over a block where the masks it holds hide every
  // score (-inf), taking the values it reads as finite: zero, of a sign, finite, an infinity, or
  // unknown (a NaN or inf may come of it).
  enum class Masked : std::uint8_t { Zero, Pos, Neg, Fin, NegInf, PosInf, Any };
  struct MaskedEval {
    std::map<ExprId, std::int64_t> box;  // the block's loop variables and extents
    std::int32_t first_scratch = 0;      // buffers from here on are the kernel's own scratch
    std::vector<ExprId> masks;           // bool: each mask hides the whole block
    std::vector<ExprId> leaves;          // loads that must be finite for the answer to hold
    std::map<ExprId, Masked> memo;
    bool fail = false;  // a leaf that cannot be checked before the block
  };
  // Collects the loads under E (an operand added to an infinity: a softmax's row max, -inf for a
  // row the mask hides entirely, where -inf - -inf is NaN) into M's leaves.
  void finite_leaves(ExprId e, MaskedEval& m) {
    const Expr x = k_.expr(e);
    if (x.op == EOp::AccRead || (x.op == EOp::Load && x.arg >= m.first_scratch)) {
      m.fail = true;  // (an inline reduce's value, known only inside the block)
      return;
    }
    if (x.op == EOp::Load) {
      if (std::find(m.leaves.begin(), m.leaves.end(), e) == m.leaves.end()) m.leaves.push_back(e);
      return;
    }
    for (ExprId s : x.src) {
      if (s >= 0) finite_leaves(s, m);
    }
  }
  Masked masked_class(ExprId e, MaskedEval& m) {
    if (auto it = m.memo.find(e); it != m.memo.end()) return it->second;
    const Expr x = k_.expr(e);
    Masked out = Masked::Any;
    auto finite = [](Masked a) {
      return a == Masked::Zero || a == Masked::Pos || a == Masked::Neg || a == Masked::Fin;
    };
    auto negate = [](Masked a) {
      switch (a) {
        case Masked::Pos: return Masked::Neg;
        case Masked::Neg: return Masked::Pos;
        case Masked::NegInf: return Masked::PosInf;
        case Masked::PosInf: return Masked::NegInf;
        case Masked::Zero:
        case Masked::Fin:
        case Masked::Any: return a;
      }
      return Masked::Any;
    };
    const ExprId mask = x.op == EOp::Where ? masked_everywhere(e, m.box) : -1;
    if (mask >= 0) {
      m.masks.push_back(mask);
      out = Masked::NegInf;
    } else if (x.op == EOp::Const) {
      if (!tensor::is_float(x.dtype)) {
        out = x.ival == 0 ? Masked::Zero : x.ival > 0 ? Masked::Pos : Masked::Neg;
      } else if (std::isnan(x.fval)) {
        out = Masked::Any;
      } else if (std::isinf(x.fval)) {
        out = x.fval < 0 ? Masked::NegInf : Masked::PosInf;
      } else {
        out = x.fval == 0 ? Masked::Zero : x.fval > 0 ? Masked::Pos : Masked::Neg;
      }
    } else if (x.op == EOp::Load || x.op == EOp::AccRead || x.op == EOp::LoopVar || x.op == EOp::SymVar) {
      out = Masked::Fin;
    } else if (x.op == EOp::Cast) {
      const Masked a = masked_class(x.src[0], m);
      out = tensor::is_float(x.dtype) ? a : finite(a) ? Masked::Fin : Masked::Any;
    } else if (x.op == EOp::Neg) {
      out = negate(masked_class(x.src[0], m));
    } else if (x.op == EOp::Add) {
      const Masked a = masked_class(x.src[0], m), b = masked_class(x.src[1], m);
      const bool ia = a == Masked::NegInf || a == Masked::PosInf, ib = b == Masked::NegInf || b == Masked::PosInf;
      if (a == Masked::Zero) {
        out = b;
      } else if (b == Masked::Zero) {
        out = a;
      } else if (ia && (finite(b) || b == a)) {
        if (finite(b)) finite_leaves(x.src[1], m);
        out = a;
      } else if (ib && finite(a)) {
        finite_leaves(x.src[0], m);
        out = b;
      } else if (finite(a) && finite(b)) {
        out = a == b && a != Masked::Fin ? a : Masked::Fin;
      }
    } else if (x.op == EOp::Mul) {
      const Masked a = masked_class(x.src[0], m), b = masked_class(x.src[1], m);
      auto times = [&](Masked p, Masked q) {
        if ((p == Masked::Zero && finite(q)) || (q == Masked::Zero && finite(p))) return Masked::Zero;
        if ((p == Masked::NegInf || p == Masked::PosInf) && (q == Masked::Pos || q == Masked::Neg)) {
          return q == Masked::Pos ? p : negate(p);
        }
        if (finite(p) && finite(q)) {
          if (p == Masked::Fin || q == Masked::Fin) return Masked::Fin;
          return p == q ? Masked::Pos : Masked::Neg;
        }
        return Masked::Any;
      };
      const Masked ab = times(a, b), ba = times(b, a);
      out = ab != Masked::Any ? ab : ba;
    } else if (x.op == EOp::Exp2) {
      const Masked a = masked_class(x.src[0], m);
      out = a == Masked::NegInf ? Masked::Zero : finite(a) ? Masked::Pos : Masked::Any;
    } else if (x.op == EOp::Recip) {
      const Masked a = masked_class(x.src[0], m);
      out = a == Masked::NegInf || a == Masked::PosInf ? Masked::Zero : a == Masked::Zero ? Masked::Any : a;
    } else if (x.op == EOp::Max) {
      const Masked a = masked_class(x.src[0], m), b = masked_class(x.src[1], m);
      out = a == Masked::NegInf ? b : b == Masked::NegInf ? a : finite(a) && finite(b) ? Masked::Fin : Masked::Any;
    } else if (x.op == EOp::Log2 || x.op == EOp::Sqrt) {
      // (log2 0 = -inf, sqrt of a negative is NaN: only what is known positive stays finite)
      const Masked a = masked_class(x.src[0], m);
      out = a == Masked::Pos    ? (x.op == EOp::Sqrt ? Masked::Pos : Masked::Fin)
            : a == Masked::Zero ? (x.op == EOp::Sqrt ? Masked::Zero : Masked::NegInf)
                                : Masked::Any;
    } else if (x.op == EOp::Bitcast) {
      out = Masked::Any;
    } else if (x.op == EOp::Where) {
      const Masked a = masked_class(x.src[1], m), b = masked_class(x.src[2], m);
      out = a == b ? a : finite(a) && finite(b) ? Masked::Fin : Masked::Any;
    } else {
      bool all_finite = true;
      for (ExprId s : x.src) {
        if (s >= 0 && !finite(masked_class(s, m))) all_finite = false;
      }
      out = all_finite ? Masked::Fin : Masked::Any;
    }
    m.memo[e] = out;
    return out;
  }

  // Appends BLK (a block of build_recompute_blocked, whose weight W is computed in LOOPS: loop
  // id, extent) to INTO, inside a gate that skips it where the masks W holds hide every score of
  // the block and W is then the reduce's identity (0 for a sum and for a product with values,
  // -inf for a max), so the block would add nothing: a causal mask's blocks past the diagonal.
  // A value added to the hidden scores (a row's max: -inf where the mask hides the whole row,
  // and -inf - -inf is NaN) must be finite over the block, which the gate checks from memory
  // first, so such a row is NaN as in the reference. The other values W reads are taken as
  // finite: as in the forward's skipped blocks, a non-finite key or value that the mask hides
  // does not reach the result.
  void skip_hidden_blocks(std::vector<Stmt>& into, std::vector<Stmt>& blk, ExprId w, ReduceKind kind,
                          const std::vector<std::pair<std::int32_t, std::int64_t>>& loops, std::int32_t first_scratch) {
    auto keep = [&] {
      for (Stmt& st : blk) into.push_back(std::move(st));
    };
    if (w < 0) return keep();
    MaskedEval m;
    m.first_scratch = first_scratch;
    for (const auto& [var, n] : loops) m.box[k_.loop_var(var)] = n;
    const Masked got = masked_class(w, m);
    const Masked identity = kind == ReduceKind::Max ? Masked::NegInf : Masked::Zero;
    if (got != identity || m.masks.empty() || m.fail) return keep();
    ExprId hidden = m.masks[0];
    for (std::size_t i = 1; i < m.masks.size(); ++i) hidden = k_.binary(EOp::And, hidden, m.masks[i]);
    if (!m.leaves.empty()) {
      // bad = 1 where a leaf is not finite somewhere in the block (its loops' own copies).
      const std::int32_t bad = define_acc(&into, DType::I64, ReduceKind::Max, k_.constant_int(0));
      passes::Subst subst;
      std::vector<Stmt> nest;
      for (const auto& [var, n] : loops) {
        const bool used = std::any_of(m.leaves.begin(), m.leaves.end(),
                                      [&, var = var](ExprId e) { return passes::uses_loop(k_, e, var); });
        if (!used) continue;
        auto [loop, v] = k_.make_loop(k_.constant_int(n));
        subst.loops[var] = v;
        nest.push_back(std::move(loop));
      }
      ExprId any_bad = -1;
      for (ExprId leaf : m.leaves) {
        const ExprId x = passes::apply(k_, leaf, subst);
        const DType t = k_.expr(x).dtype;
        const double inf = std::numeric_limits<double>::infinity();
        const ExprId finite = k_.binary(EOp::And, k_.binary(EOp::Cmplt, x, k_.constant_float(inf, t)),
                                        k_.binary(EOp::Cmplt, k_.constant_float(-inf, t), x));
        const ExprId b = k_.where(finite, k_.constant_int(0), k_.constant_int(1));
        any_bad = any_bad < 0 ? b : k_.binary(EOp::Max, any_bad, b);
      }
      Stmt upd = update_acc(bad, DType::I64, ReduceKind::Max, any_bad);
      if (nest.empty()) {
        into.push_back(upd);
      } else {
        nest.back().body.push_back(upd);
        nest_into(&into, nest);
      }
      hidden = k_.binary(EOp::And, hidden, k_.binary(EOp::Cmpeq, k_.acc_read(bad, DType::I64), k_.constant_int(0)));
    }
    into.push_back(gated(hidden, std::move(blk)));
  }

  // A loop that runs BODY once, or not at all where bool SKIP holds (a block a mask hides).
  Stmt gated(ExprId skip, std::vector<Stmt> body) {
    auto [gate, unused] = k_.make_loop(k_.where(skip, k_.constant_int(0), k_.constant_int(1)));
    (void)unused;
    gate.body = std::move(body);
    return std::move(gate);
  }

  // Nests LOOPS (each in the one before) and appends the outermost to INTO.
  static void nest_into(std::vector<Stmt>* into, std::vector<Stmt>& loops) {
    for (std::size_t i = loops.size(); i-- > 1;) loops[i - 1].body.push_back(std::move(loops[i]));
    if (!loops.empty()) into->push_back(std::move(loops[0]));
    loops.clear();
  }

  // A reduce computed inside the kernel's statements (an online softmax's scores): an
  // accumulator and loops over its reduced axes, appended to emit_ before the statement that
  // reads it; its value is the accumulator's.
  ExprId inline_reduce(const Node* n, const std::vector<ExprId>& idx) {
    std::vector<Stmt>* into = emit_;
    ++inline_count_;
    if (recording_) {
      for (ExprId i : idx) inline_indices_.push_back(i);
    }
    // In an interchanged sum's term, outside the output row's loop unless it depends on it.
    if (emit_ == term_scope_ && row_scope_ != nullptr &&
        std::any_of(idx.begin(), idx.end(), [&](ExprId i) { return passes::uses_loop(k_, i, row_loop_); })) {
      into = row_scope_;
    }
    const Node* src = n->src[0].get();
    const DType acc_t = acc_dtype(n->dtype);
    const std::int32_t acc = define_acc(into, acc_t, n->reduce_kind, reduce_init(n->reduce_kind, n->dtype, acc_t));
    std::vector<ExprId> sidx = idx;
    std::vector<Stmt> loops;
    loops.reserve(src->shape.size());
    for (auto a : n->axes) {
      const auto i = static_cast<std::size_t>(a);
      if (src->shape[i] == Dim(1)) continue;
      auto [loop, var] = k_.make_loop(k_.dim(src->shape[i]));
      loops.push_back(std::move(loop));
      sidx[i] = var;
    }
    std::vector<Stmt>* inner = loops.empty() ? into : &loops.back().body;
    if (inline_groups_ != nullptr && !loops.empty()) {
      std::vector<std::int32_t> vars;
      for (const Stmt& l : loops) vars.push_back(l.var);
      inline_groups_->push_back(std::move(vars));
    }
    // (In a scope of its own: a reduce nested in this one, whose index does not depend on this
    // one's loops, must not be reused after them.)
    ExprId v = -1;
    in_scope(inner, [&] { v = k_.unary(EOp::Cast, value(src, sidx), acc_t); });
    // On the CPU, a sum or max over 16 or more terms runs in lanes (independent chains that
    // vectorize): a recomputed attention's q . k, one per term of the sum it feeds. Not when
    // its terms computed a reduce of their own in its loop (a product of the weights, say,
    // that a sum of the output's elements reads inline): lanes take a loop of updates only.
    if (!gpu_ && !loops.empty() && inner->empty() && n->reduce_kind != ReduceKind::Prod && tensor::is_float(acc_t)) {
      const std::int64_t lanes = 2 * how_.vector_floats * 4 / static_cast<std::int64_t>(tensor::dtype_size(acc_t));
      auto e = k_.as_const(loops.back().extent);
      if (e && *e >= lanes) inline_lanes_.push_back(Opt::lanes(loops.back().var, lanes));
    }
    inner->push_back(update_acc(acc, acc_t, n->reduce_kind, v));
    nest_into(into, loops);
    const ExprId result = k_.unary(EOp::Cast, k_.acc_read(acc, acc_t), n->dtype);
    if (inline_tops_ != nullptr && into == tops_scope_) inline_tops_->emplace_back(n, result);
    return result;
  }

  // Expression ROOT with expression FROM replaced by TO (rebuilt, so it simplifies again).
  ExprId substitute(ExprId root, ExprId from, ExprId to) {
    std::map<ExprId, ExprId> done;
    std::function<ExprId(ExprId)> go = [&](ExprId id) -> ExprId {
      if (id == from) return to;
      if (auto it = done.find(id); it != done.end()) return it->second;
      const Expr x = k_.expr(id);
      ExprId out = id;
      if (auto op = primitive_of(x.op)) {
        const int n = tensor::op_info(*op).arity;
        ExprId a[3] = {-1, -1, -1};
        bool changed = false;
        for (int i = 0; i < n; ++i) {
          a[i] = go(x.src[i]);
          changed = changed || a[i] != x.src[i];
        }
        if (changed) {
          out = n == 1   ? k_.unary(x.op, a[0], x.dtype)
                : n == 2 ? k_.binary(x.op, a[0], a[1])
                         : k_.where(a[0], a[1], a[2]);
        }
      }
      done.emplace(id, out);
      return out;
    };
    return go(root);
  }

  static Stmt set_acc(std::int32_t acc, DType t, ExprId v) {
    Stmt set{Stmt::Kind::AccSet};
    set.acc = acc;
    set.dtype = t;
    set.value = v;
    return set;
  }

  // Arithmetic on data (not index math) reachable from the kernel's statements.
  int arithmetic_ops() const {
    std::vector<ExprId> stack;
    int ops = 0;
    std::function<void(const std::vector<Stmt>&)> roots = [&](const std::vector<Stmt>& body) {
      for (const Stmt& st : body) {
        if (st.kind != Stmt::Kind::Loop) stack.push_back(st.value);
        if (st.kind == Stmt::Kind::AccUpdate) ++ops;  // the combine
        roots(st.body);
      }
    };
    roots(k_.body);
    k_.visit(stack, [&](ExprId, const Expr& x) {
      if (x.op == EOp::Load) return false;  // its index is not data arithmetic
      const bool arithmetic = x.op == EOp::Min || (primitive_of(x.op) && x.op != EOp::Cast && x.op != EOp::Bitcast);
      if (arithmetic && x.dtype != DType::I64) ++ops;
      return true;
    });
    return ops;
  }

 private:
  // Set by build for the reduce's update: the loads' index expressions and the loop
  // variables of the last output axis and the innermost reduce axis.
  ExprId update_value_ = -1;
  ExprId last_out_var_ = -1;
  ExprId inner_reduce_var_ = -1;

  // Whether the reduce's update is a product (through a cast): a matmul-like sum.
  bool sum_of_products() const {
    if (update_value_ < 0) return false;
    ExprId v = update_value_;
    if (k_.expr(v).op == EOp::Cast) v = k_.expr(v).src[0];
    return k_.expr(v).op == EOp::Mul;
  }

  // Whether putting the last output axis inside the reduce loops makes the update's loads
  // more contiguous. Only for float sums and maxes whose output dtype can hold the running
  // value (the output buffer accumulates).
  bool interchange_pays(const Node* red) {
    if (last_out_var_ < 0 || inner_reduce_var_ < 0 || !can_interchange(red)) return false;
    auto cost = [&](ExprId var) {
      int c = 0;
      for (ExprId index : load_indices(update_value_)) {
        auto coeff = k_.coefficient(index, var);
        if (!coeff) c += 4;
        else if (*coeff == 0) continue;
        else if (*coeff == 1 || *coeff == -1) c += 1;
        else c += 4;
      }
      return c;
    };
    return cost(last_out_var_) < cost(inner_reduce_var_);
  }

  // A float sum or max may accumulate in its output row: in the output buffer when its dtype
  // holds the running value, else in scratch (interchange_scratch).
  bool can_interchange(const Node* red) const {
    if (red->reduce_kind == ReduceKind::Prod) return false;
    if (red->dtype != DType::F32 && red->dtype != DType::F64) return false;
    return out_->dtype == red->dtype || interchange_scratch(red).has_value();
  }

  // The elements of the scratch an interchanged reduce RED accumulates in when the kernel
  // stores another dtype (a bf16 matrix-vector product, whose sums are f32: strided down the
  // weights' columns without it, at 1 GB/s): RED's whole output, when its size is constant,
  // at most kInterchangeScratch bytes, and stored in order. None otherwise.
  static constexpr std::int64_t kInterchangeScratch = 256 << 10;
  std::optional<std::int64_t> interchange_scratch(const Node* red) const {
    auto n = tensor::shape_numel(red->shape).as_const();
    if (!n || *n * static_cast<std::int64_t>(tensor::dtype_size(red->dtype)) > kInterchangeScratch) {
      return std::nullopt;
    }
    if (stored_through(red)) return std::nullopt;
    return *n;
  }

  std::vector<ExprId> load_indices(ExprId root) const {
    std::vector<ExprId> out;
    k_.visit({root}, [&](ExprId, const Expr& x) {
      if (x.op == EOp::Load) out.push_back(x.src[0]);
      return true;
    });
    return out;
  }

  // Builds the kernel's loops. One loop per axis of the output (an axis of size 1 needs
  // none); for a reduce, the reduced axes become inner loops around an accumulator. With
  // `interchange`, a reduce instead accumulates in the output row: the last output axis
  // loops innermost, once to initialize, once per reduce step, and once for any epilogue.
  Lowered build(const Node* red, bool interchange, std::int32_t row = -1) {
    fused_reduce_ = nullptr;
    const Node* n = red ? red : out_;
    // An elementwise kernel loops over the finest shape its value is a reshape of: the store
    // index is the same, and a view that splits axes (a convolution's window) then indexes
    // each loop linearly instead of dividing a merged index.
    const Node* vs = value_source(n);
    if (red == nullptr) {
      while (vs->op == Op::Reshape && (vs == n || !materialized_.count(vs)) && vs->src[0]->shape.size() > vs->shape.size()) {
        vs = vs->src[0].get();
      }
    }
    const tensor::Shape& shape = red == nullptr ? vs->shape : n->shape;
    std::vector<Stmt>* body = &k_.body;
    std::vector<ExprId> idx(shape.size());
    bool parallel_set = false;
    Lowered result;
    const bool reduce = red != nullptr;
    std::vector<bool> reduced(shape.size(), false);
    if (reduce) {
      for (auto a : n->axes) reduced[static_cast<std::size_t>(a)] = true;
    }
    // The last output axis that needs a loop.
    std::size_t last = shape.size();
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (!reduced[i] && shape[i] != Dim(1)) last = i;
    }
    if (interchange && row >= 0) last = static_cast<std::size_t>(row);
    // An output that permutes the reduce (schedule.cpp's recompute_softmax: a key gradient
    // summed in its matmul's transposed order) is stored where the permutation puts each element.
    const std::optional<std::vector<int>> moved = reduce ? stored_through(n) : std::nullopt;
    auto store_at = [&](const std::vector<ExprId>& at) { return stored_index(n, moved, at); };
    auto open_loop = [&](const Dim& extent) -> ExprId {
      auto [loop, var] = k_.make_loop(k_.dim(extent));
      if (!parallel_set) {
        loop.parallel = true;
        parallel_set = true;
        result.parallel_extent = extent;
      }
      body->push_back(std::move(loop));
      Stmt* s = &body->back();
      body = &s->body;
      return var;
    };
    out_loops_.assign(shape.size(), -1);
    reduce_loops_.clear();
    reduce_extents_.clear();
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (reduced[i] || shape[i] == Dim(1) || (interchange && i == last)) {
        idx[i] = k_.constant_int(0);
        continue;
      }
      idx[i] = open_loop(shape[i]);
      out_loops_[i] = k_.expr(idx[i]).arg;
    }
    result.work_per_iteration = 1;
    bool past_parallel = false;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (reduced[i] || shape[i] == Dim(1)) continue;
      if (past_parallel || (interchange && i == last && parallel_set)) {
        result.work_per_iteration = result.work_per_iteration * shape[i];
      }
      past_parallel = true;
    }
    if (!reduce) {
      ExprId v = -1;
      in_scope(body, [&] { v = value(vs, idx); });
      body->push_back(store(linear_index(idx, shape), v));
      if (!parallel_set) result.parallel_extent = 1;
      return result;
    }
    const Node* src = n->src[0].get();
    const DType acc_t = acc_dtype(n->dtype);
    // The row loop of an interchanged reduce: parallel when no outer loop is.
    const bool row_parallel = interchange && !parallel_set;
    auto row_loop = [&](std::vector<Stmt>* into, std::vector<ExprId>& at) -> std::vector<Stmt>* {
      auto [loop, var] = k_.make_loop(k_.dim(n->shape[last]));
      loop.parallel = row_parallel;
      into->push_back(std::move(loop));
      at[last] = var;
      return &into->back().body;
    };
    if (row_parallel) result.parallel_extent = n->shape[last];
    std::int32_t acc = -1;
    std::vector<Stmt>* outer = body;
    // Where an interchanged reduce accumulates: the output (buffer 0), or scratch of the
    // reduce's dtype when the kernel stores another (interchange_scratch).
    std::int32_t acc_buf = 0;
    auto acc_store = [&](ExprId i, ExprId v) {
      Stmt st = store(i, v);
      st.buffer = acc_buf;
      return st;
    };
    if (interchange && out_->dtype != n->dtype) {
      const auto size = interchange_scratch(n);
      TL_CHECK(size.has_value(), "interchange: no scratch for " + tensor::shape_str(n->shape));
      k_.buffers.push_back(BufferParam{n->dtype, false, *size});
      acc_buf = static_cast<std::int32_t>(k_.buffers.size() - 1);
    }
    if (interchange) {
      std::vector<ExprId> at = idx;
      std::vector<Stmt>* row = row_loop(body, at);
      row->push_back(acc_store(store_at(at), reduce_init(n->reduce_kind, n->dtype, acc_t)));
    } else {
      acc = define_acc(body, acc_t, n->reduce_kind, reduce_init(n->reduce_kind, n->dtype, acc_t));
    }
    std::vector<ExprId> sidx = idx;
    inner_reduce_var_ = -1;
    for (std::size_t i = 0; i < src->shape.size(); ++i) {
      if (!reduced[i] || src->shape[i] == Dim(1)) continue;
      auto [loop, var] = k_.make_loop(k_.dim(src->shape[i]));
      body->push_back(std::move(loop));
      Stmt* s = &body->back();
      body = &s->body;
      sidx[i] = var;
      inner_reduce_var_ = var;
      reduce_loops_.push_back(k_.expr(var).arg);
      reduce_extents_.push_back(k_.dim(src->shape[i]));
      result.work_per_iteration = result.work_per_iteration * src->shape[i];
    }
    if (interchange) {
      // The row loop is built apart and appended after the term: reduces the term computes
      // inline go before it unless they depend on the row (inline_reduce).
      std::vector<Stmt> rows;
      std::vector<ExprId> at = idx;
      std::vector<Stmt>* row_body = row_loop(&rows, at);
      sidx[last] = at[last];
      ExprId here = store_at(at);
      ExprId v = -1;
      term_scope_ = body;
      row_scope_ = row_body;
      row_loop_ = k_.expr(at[last]).arg;
      in_scope(body, [&] { v = k_.unary(EOp::Cast, value(src, sidx), acc_t); });
      term_scope_ = row_scope_ = nullptr;
      ExprId cur = k_.load(acc_buf, here);
      ExprId next = n->reduce_kind == ReduceKind::Sum ? k_.binary(EOp::Add, cur, v)
                    : n->reduce_kind == ReduceKind::Max ? k_.binary(EOp::Max, cur, v)
                                                        : k_.binary(EOp::Mul, cur, v);
      row_body->push_back(acc_store(here, next));
      body->push_back(std::move(rows[0]));
      body = outer;
      if (n != out_ && !moved) {
        std::vector<ExprId> at2 = idx;
        std::vector<Stmt>* erow = row_loop(body, at2);
        ExprId ehere = linear_index(at2, n->shape);
        fused_reduce_ = n;
        fused_value_ = k_.load(acc_buf, ehere);
        ExprId ev = -1;
        in_scope(erow, [&] { ev = value(value_source(out_), unravel(ehere, out_->shape)); });
        erow->push_back(store(ehere, ev));
      }
      if (!parallel_set && !row_parallel) result.parallel_extent = 1;
      return result;
    }
    ExprId term = -1;
    recording_ = true;
    in_scope(body, [&] { term = k_.unary(EOp::Cast, value(src, sidx), acc_t); });
    recording_ = false;
    Stmt upd = update_acc(acc, acc_t, n->reduce_kind, term);
    update_value_ = upd.value;
    last_out_var_ = last < n->shape.size() ? idx[last] : -1;
    body->push_back(upd);
    body = outer;
    fused_reduce_ = n;
    fused_value_ = k_.unary(EOp::Cast, k_.acc_read(acc, acc_t), n->dtype);
    ExprId out_index = store_at(idx);
    ExprId v = fused_value_;
    if (n != out_ && !moved) {
      // The epilogue: the output has one element per reduce output, in the same order.
      in_scope(body, [&] { v = value(value_source(out_), unravel(out_index, out_->shape)); });
    }
    body->push_back(store(out_index, v));
    if (!parallel_set) result.parallel_extent = 1;
    return result;
  }

  const schedule::ScheduledKernel& sk_;
  const Node* out_;
  const std::unordered_set<const Node*>& materialized_;
  const Lowering& how_;
  bool gpu_;  // lowering for a GPU: plain loops, flattened onto threads by the emitter
  Kernel k_;
  std::vector<const Node*> inputs_;
  std::vector<std::int32_t> input_slots_;
  // Set by build: each output axis's loop (-1: none), the reduce loops and their extents.
  std::vector<std::int32_t> out_loops_;
  std::vector<std::int32_t> reduce_loops_;
  std::vector<ExprId> reduce_extents_;
  std::map<const Node*, std::int32_t> slots_;
  std::map<std::pair<const Node*, std::vector<ExprId>>, ExprId> memo_;
  const Node* fused_reduce_ = nullptr;  // its value is the accumulator's, once lowered
  std::map<const Node*, ExprId> row_accs_;  // row-fused reduces: their accumulators
  ExprId fused_value_ = -1;
  // Where a reduce met inside an expression is computed (inline_reduce): the statements being
  // built, before the one that reads it. Null outside an online softmax's pass.
  std::vector<Stmt>* emit_ = nullptr;
  std::size_t inline_count_ = 0;  // reduces computed inline so far
  // The index expressions of the reduces a plain build's sum computes inline in its terms.
  std::vector<ExprId> inline_indices_;
  Opts inline_lanes_;  // lanes for the reduces computed inline (CPU)
  // While set, each reduce computed inline appends its loops here (build_recompute_blocked).
  std::vector<std::vector<std::int32_t>>* inline_groups_ = nullptr;
  // While set, each reduce computed inline directly into tops_scope_ appends its node and value
  // to inline_tops_; reduces met while inline_values_ is set take their value from it.
  std::vector<std::pair<const Node*, ExprId>>* inline_tops_ = nullptr;
  std::vector<Stmt>* tops_scope_ = nullptr;
  const std::map<const Node*, ExprId>* inline_values_ = nullptr;
  bool recording_ = false;
  // An interchanged sum's term: where its inline reduces go (term_scope_), or inside the row's
  // loop (row_scope_, loop row_loop_) for those that depend on the row.
  std::vector<Stmt>* term_scope_ = nullptr;
  std::vector<Stmt>* row_scope_ = nullptr;
  std::int32_t row_loop_ = -1;

  // Nests a loop in *BODY for each axis of SHAPE not `skip`ped and longer than 1 (the first
  // one parallel), moving BODY into the innermost; sets RESULT's parallel extent and work per
  // iteration. The index per axis: the loop's variable, or 0.
  std::vector<ExprId> open_loops(const tensor::Shape& shape, const std::vector<bool>& skip, Lowered& result,
                                 std::vector<Stmt>*& body) {
    std::vector<ExprId> idx(shape.size());
    bool parallel_set = false;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (skip[i] || shape[i] == Dim(1)) {
        idx[i] = k_.constant_int(0);
        continue;
      }
      auto [loop, var] = k_.make_loop(k_.dim(shape[i]));
      if (!parallel_set) {
        loop.parallel = true;
        parallel_set = true;
        result.parallel_extent = shape[i];
      } else {
        result.work_per_iteration = result.work_per_iteration * shape[i];
      }
      body->push_back(std::move(loop));
      body = &body->back().body;
      idx[i] = var;
    }
    if (!parallel_set) result.parallel_extent = 1;
    return idx;
  }

  // An assign through a view (Graph::make_assign_view): loops over the view, computes the
  // value there and stores it where the view shows that element of the target, buffer 0,
  // which the executor passes in place. The rest of the target is not touched.
  Lowered build_view_assign() {
    const Node* src = out_->src[1].get();
    const tensor::Shape& shape = src->shape;
    std::vector<Stmt>* body = &k_.body;
    Lowered result;
    std::vector<ExprId> idx = open_loops(shape, std::vector<bool>(shape.size(), false), result, body);
    ExprId v = value(src, idx);
    body->push_back(store(view_index(out_->src[2].get(), out_->src[0].get(), idx), v));
    return result;
  }

  // A scatter-add: the output starts as a copy of X, then each value is added where its index
  // points, in the index's row-major order. The axes before the scatter's (and on a GPU, those
  // after it too) are loops whose iterations touch disjoint elements, so they run in
  // parallel; the copy and the additions along the axis run in order inside each iteration.
  // On the CPU the axes after the scatter's stay innermost, along memory.
  Lowered build_scatter_add() {
    const Node* x = out_->src[0].get();
    const Node* index = out_->src[1].get();
    const Node* values = out_->src[2].get();
    const auto axis = static_cast<std::size_t>(out_->axes[0]);
    const tensor::Shape& shape = out_->shape;
    Lowered result;
    std::vector<Stmt>* body = &k_.body;
    std::vector<bool> skip(shape.size(), false);
    for (std::size_t i = axis; i < shape.size(); ++i) skip[i] = gpu_ ? i == axis : true;
    std::vector<ExprId> idx = open_loops(shape, skip, result, body);
    // On the CPU with no parallel axis before the scatter's (an embedding table's gradient),
    // the first axis after it is split into column blocks that run in parallel instead: each
    // block's copy and additions are still in order, and a block is a few cache lines wide.
    std::size_t blocked = shape.size();
    std::int64_t block = 1;
    ExprId block_start = -1;
    if (!gpu_ && result.parallel_extent == Dim(1)) {
      for (std::size_t i = axis + 1; i < shape.size() && blocked == shape.size(); ++i) {
        auto n = shape[i].as_const();
        if (!n || *n < 64) continue;
        for (std::int64_t c = *n / 8; c >= 16; --c) {
          if (*n % c == 0) {
            blocked = i;
            block = c;
            break;
          }
        }
      }
      if (blocked < shape.size()) {
        const std::int64_t blocks = *shape[blocked].as_const() / block;
        auto [loop, var] = k_.make_loop(k_.constant_int(blocks));
        loop.parallel = true;
        result.parallel_extent = blocks;
        Dim work = block;
        for (std::size_t i = 0; i < shape.size(); ++i) work = i == blocked ? work : work * shape[i];
        result.work_per_iteration = work;
        body->push_back(std::move(loop));
        body = &body->back().body;
        block_start = k_.binary(EOp::Mul, var, k_.constant_int(block));
      }
    }
    // Loops over the skipped axes in order, innermost last; fn(index) fills the innermost body.
    auto nest = [&](const tensor::Shape& extents, std::vector<ExprId> at, const auto& fn) {
      std::vector<Stmt>* inner = body;
      for (std::size_t i = 0; i < extents.size(); ++i) {
        if (!skip[i] || extents[i] == Dim(1)) continue;
        auto [loop, var] = k_.make_loop(i == blocked ? k_.constant_int(block) : k_.dim(extents[i]));
        inner->push_back(std::move(loop));
        inner = &inner->back().body;
        at[i] = i == blocked ? k_.binary(EOp::Add, block_start, var) : var;
      }
      fn(at, inner);
    };
    nest(shape, idx, [&](const std::vector<ExprId>& at, std::vector<Stmt>* inner) {
      const ExprId where = linear_index(at, shape);
      inner->push_back(store(where, value(x, at)));
    });
    nest(index->shape, idx, [&](const std::vector<ExprId>& at, std::vector<Stmt>* inner) {
      auto [valid, clamped] = index_in_axis(value(index, at), shape[axis]);
      std::vector<ExprId> target = at;
      target[axis] = clamped;
      const ExprId where = linear_index(target, shape);
      // An index outside the axis stores back the clamped element unchanged.
      const ExprId old = k_.load(0, where);
      inner->push_back(store(where, k_.where(valid, k_.binary(EOp::Add, old, value(values, at)), old)));
    });
    return result;
  }

  // The row-major position in BASE of element IDX of VIEW, a chain of movement ops over BASE.
  // (Pads and expands in a written view were checked to map each element to a distinct stored
  // one: assign_view.cpp.)
  ExprId view_index(const Node* view, const Node* base, std::vector<ExprId> idx) {
    for (const Node* n = view; n != base; n = n->src[0].get()) {
      if (tensor::op_info(n->op).group != tensor::OpGroup::Movement) {
        TL_UNREACHABLE(std::string("lower: an assign's view holds a ") + tensor::op_name(n->op) + ", not a view of its target");
      }
      idx = source_index(n, idx);
    }
    return linear_index(idx, base->shape);
  }

  // An online softmax's index of its weights, from the index of the operand that reads them:
  // below the operand's views (and the cast widening half-precision weights, which keeps it).
  std::vector<ExprId> weights_index(const schedule::OnlineSoftmax& o, std::vector<ExprId> idx) {
    for (const Node* n = o.weights_read; n != o.weights; n = n->src[0].get()) {
      if (n->op != Op::Cast) idx = source_index(n, idx);
    }
    return idx;
  }

  // The index into movement op N's source of element IDX of N. For a pad, the shifted index
  // as it is (movement() guards the padding; a written view has none).
  std::vector<ExprId> source_index(const Node* n, const std::vector<ExprId>& idx) {
    const Node* s = n->src[0].get();
    std::vector<ExprId> sidx(s->shape.size());
    switch (n->op) {
      case Op::Reshape: return unravel(linear_index(idx, n->shape), s->shape);
      case Op::Permute:
        for (std::size_t i = 0; i < idx.size(); ++i) sidx[static_cast<std::size_t>(n->axes[i])] = idx[i];
        break;
      case Op::Expand:
        for (std::size_t i = 0; i < idx.size(); ++i) sidx[i] = s->shape[i] == Dim(1) ? k_.constant_int(0) : idx[i];
        break;
      case Op::Shrink:
        for (std::size_t i = 0; i < idx.size(); ++i) sidx[i] = k_.binary(EOp::Add, idx[i], k_.dim(n->ranges[i].first));
        break;
      case Op::Pad:
        for (std::size_t i = 0; i < idx.size(); ++i) sidx[i] = k_.binary(EOp::Add, idx[i], k_.dim(-n->ranges[i].first));
        break;
      case Op::Flip:
        for (std::size_t i = 0; i < idx.size(); ++i) {
          if (!n->axes[i]) {
            sidx[i] = idx[i];
            continue;
          }
          const ExprId last = k_.dim(s->shape[i] - Dim(1));
          sidx[i] = k_.binary(EOp::Add, last, k_.unary(EOp::Neg, idx[i], DType::I64));
        }
        break;
#include "tensor/elementwise_cases.inc"
      case Op::Const:
      case Op::Buffer:
      case Op::Iota:
      case Op::Reduce:
      case Op::Gather:
      case Op::ScatterAdd:
      case Op::Copy:
      case Op::Assign:
      case Op::Extern: TL_UNREACHABLE(std::string("lower: ") + tensor::op_name(n->op) + " is not a movement op");
    }
    return sidx;
  }


  // The index into `shape` of row-major position `flat`.
  std::vector<ExprId> unravel(ExprId flat, const tensor::Shape& shape) {
    std::vector<ExprId> idx(shape.size());
    Dim stride = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
      ExprId q = k_.binary(EOp::Idiv, flat, k_.dim(stride));
      idx[i] = shape[i] == Dim(1) ? k_.constant_int(0) : i == 0 ? q : k_.binary(EOp::Mod, q, k_.dim(shape[i]));
      stride = stride * shape[i];
    }
    return idx;
  }


  // The accumulator dtype of a reduce of dtype t: f32 for every float narrower than f64, i64
  // for integers (which wrap when stored).
  static DType acc_dtype(DType t) {
    if (!tensor::is_float(t)) return DType::I64;
    return t == DType::F64 ? DType::F64 : DType::F32;
  }

  // Defines a new accumulator starting at `init`, appended to `into`; returns its id.
  std::int32_t define_acc(std::vector<Stmt>* into, DType acc_t, ReduceKind kind, ExprId init) {
    Stmt def{Stmt::Kind::AccDef};
    def.acc = k_.new_acc();
    def.dtype = acc_t;
    def.reduce = kind;
    def.value = init;
    into->push_back(def);
    return def.acc;
  }

  static Stmt update_acc(std::int32_t acc, DType acc_t, ReduceKind kind, ExprId v) {
    Stmt upd{Stmt::Kind::AccUpdate};
    upd.acc = acc;
    upd.dtype = acc_t;
    upd.reduce = kind;
    upd.value = v;
    return upd;
  }

  Stmt store(ExprId index, ExprId v) {
    Stmt s{Stmt::Kind::Store};
    s.buffer = 0;
    s.index = index;
    s.value = v;
    return s;
  }

  ExprId reduce_init(ReduceKind kind, DType t, DType acc_t) {
    switch (kind) {
      case ReduceKind::Sum: return tensor::is_float(acc_t) ? k_.constant_float(0, acc_t) : k_.constant_int(0, acc_t);
      case ReduceKind::Prod: return tensor::is_float(acc_t) ? k_.constant_float(1, acc_t) : k_.constant_int(1, acc_t);
      case ReduceKind::Max:
        if (tensor::is_float(acc_t)) return k_.constant_float(-std::numeric_limits<double>::infinity(), acc_t);
        if (tensor::dtype_category(t) == tensor::DCat::Signed) {
          std::int64_t lowest = tensor::dtype_bits(t) == 64 ? std::numeric_limits<std::int64_t>::min()
                                                             : -(std::int64_t{1} << (tensor::dtype_bits(t) - 1));
          return k_.constant_int(lowest, acc_t);
        }
        return k_.constant_int(0, acc_t);
    }
    return k_.constant_int(0, acc_t);
  }

  // Row-major flat index of idx in shape.
  ExprId linear_index(const std::vector<ExprId>& idx, const tensor::Shape& shape) {
    ExprId flat = k_.constant_int(0);
    Dim stride = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
      flat = k_.binary(EOp::Add, flat, k_.binary(EOp::Mul, idx[i], k_.dim(stride)));
      stride = stride * shape[i];
    }
    return flat;
  }

  // Element I of a quantized buffer as an f32 (tensor/dtype.h gives the layouts): its block's
  // f16 scale times its packed value, read by load_as at byte offsets that the index
  // arithmetic keeps linear in the loops (in block_lanes' 32 copies of a reduce's body, the
  // block index is the same in all and the values' byte offsets consecutive).
  ExprId dequantized(std::int32_t buffer, ExprId i, DType t) {
    auto c = [&](std::int64_t v) { return k_.constant_int(v); };
    const auto block_bytes = static_cast<std::int64_t>(tensor::dtype_size(t));
    const ExprId block = k_.binary(EOp::Idiv, i, c(32));
    const ExprId j = k_.binary(EOp::Mod, i, c(32));
    const ExprId scale =
        k_.unary(EOp::Cast, k_.load_as(buffer, k_.binary(EOp::Mul, block, c(block_bytes / 2)), DType::F16), DType::F32);
    const ExprId values = k_.binary(EOp::Add, k_.binary(EOp::Mul, block, c(block_bytes)), c(2));
    ExprId q;
    if (t == DType::Q8_0) {
      q = k_.unary(EOp::Cast, k_.load_as(buffer, k_.binary(EOp::Add, values, j), DType::I8), DType::F32);
    } else {
      const ExprId byte =
          k_.unary(EOp::Cast, k_.load_as(buffer, k_.binary(EOp::Add, values, k_.binary(EOp::Mod, j, c(16))), DType::U8),
                   DType::I32);
      const ExprId low = k_.binary(EOp::And, byte, k_.constant_int(15, DType::I32));
      const ExprId high = k_.binary(EOp::Idiv, byte, k_.constant_int(16, DType::I32));
      const ExprId u = k_.where(k_.binary(EOp::Cmplt, j, c(16)), low, high);
      q = k_.unary(EOp::Cast, k_.binary(EOp::Add, u, k_.constant_int(-8, DType::I32)), DType::F32);
    }
    return k_.binary(EOp::Mul, q, scale);
  }

  std::int32_t slot(const Node* n) {
    auto [it, fresh] = slots_.try_emplace(n, static_cast<std::int32_t>(k_.buffers.size()));
    if (fresh) {
      inputs_.push_back(n);
      input_slots_.push_back(it->second);
      k_.buffers.push_back(BufferParam{n->dtype, false});
    }
    return it->second;
  }

  ExprId zero(DType t) { return tensor::is_float(t) ? k_.constant_float(0, t) : k_.constant_int(0, t); }

  ExprId value(const Node* n, const std::vector<ExprId>& idx) {
    auto key = std::make_pair(n, idx);
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    ExprId v = compute(n, idx);
    memo_.emplace(std::move(key), v);
    return v;
  }

  ExprId compute(const Node* n, const std::vector<ExprId>& idx) {
    if (n == fused_reduce_) return fused_value_;
    if (auto it = row_accs_.find(n); it != row_accs_.end()) return it->second;
    if (n != out_ && materialized_.count(n)) {
      if (tensor::is_quantized(n->dtype)) return dequantized(slot(n), linear_index(idx, n->shape), n->dtype);
      return k_.load(slot(n), linear_index(idx, n->shape));
    }
    const auto& src = n->src;
    auto arg = [&](std::size_t i) { return value(src[i].get(), idx); };
    switch (n->op) {
      case Op::Const:
        return tensor::is_float(n->dtype) ? k_.constant_float(n->fvalue, n->dtype) : k_.constant_int(n->ivalue, n->dtype);
      case Op::Iota: return k_.unary(EOp::Cast, idx[static_cast<std::size_t>(n->axes[0])], n->dtype);
#include "tensor/elementwise_cases.inc"
      {
        const EOp e = *eop_of(n->op);
        // Operands in order (not in the compiler's order of evaluating arguments), so the
        // kernel's expressions and buffers are numbered the same by every build.
        const ExprId a = arg(0);
        if (tensor::op_info(n->op).arity == 1) return k_.unary(e, a, n->dtype);
        const ExprId b = arg(1);
        if (tensor::op_info(n->op).arity == 2) return k_.binary(e, a, b);
        const ExprId c = arg(2);
        return k_.where(a, b, c);  // the one ternary op
      }
      case Op::Gather: return gather(n, idx);
      case Op::Copy: return arg(0);
      case Op::Assign: return value(src[1].get(), idx);
      case Op::Reshape:
      case Op::Permute:
      case Op::Expand:
      case Op::Pad:
      case Op::Shrink:
      case Op::Flip: return movement(n, idx);
      case Op::Reduce:
        if (inline_values_ != nullptr) {
          if (auto it = inline_values_->find(n); it != inline_values_->end()) return it->second;
        }
        if (emit_ != nullptr) return inline_reduce(n, idx);
        break;
      case Op::Buffer:
      case Op::ScatterAdd:
      case Op::Extern: break;  // materialized or fused before: never computed inline
    }
    TL_UNREACHABLE(std::string("lower: unexpected op ") + tensor::op_name(n->op) + " inside the kernel for " +
                           tensor::node_str(out_, 6));
  }

  // A gather computes its source where the index tensor points: the source's index is IDX
  // with the gather's axis replaced by the index's value there, so the source fuses into the
  // kernel as a load (or whatever elementwise work it is) at a computed position. An index
  // outside the axis reads 0; the load itself is clamped into the axis, as a pad's is.
  ExprId gather(const Node* n, const std::vector<ExprId>& idx) {
    const Node* x = n->src[0].get();
    const auto axis = static_cast<std::size_t>(n->axes[0]);
    auto [valid, at] = index_in_axis(value(n->src[1].get(), idx), x->shape[axis]);
    std::vector<ExprId> sidx = idx;
    sidx[axis] = at;
    const ExprId v = value(x, sidx);
    return k_.where(valid, v, zero(n->dtype));
  }

  // For an index value I (any integer dtype) into an axis of SIZE: whether it lies in
  // [0, SIZE), and I clamped into the axis (so a load there stays in bounds; I itself when
  // it is known to lie inside).
  std::pair<ExprId, ExprId> index_in_axis(ExprId i, const Dim& extent) {
    if (k_.expr(i).dtype != DType::I64) i = k_.unary(EOp::Cast, i, DType::I64);
    const ExprId size = k_.dim(extent);
    const ExprId valid = in_range(i, size);
    if (auto c = k_.as_const(valid); c && *c) return {valid, i};
    return {valid, clamp(i, size)};
  }

  ExprId movement(const Node* n, const std::vector<ExprId>& idx) {
    const Node* s = n->src[0].get();
    std::vector<ExprId> sidx = source_index(n, idx);
    if (n->op != Op::Pad) return value(s, sidx);
    ExprId valid = k_.constant_bool(true);
    for (std::size_t i = 0; i < sidx.size(); ++i) {
      valid = k_.binary(EOp::And, valid, in_range(sidx[i], k_.dim(s->shape[i])));
    }
    if (auto c = k_.as_const(valid); c && *c) return value(s, sidx);
    if (auto c = k_.as_const(valid); c && !*c) return zero(n->dtype);
    // Outside the source, the index is clamped into it: loads stay in bounds, and the
    // clamped index has a known range, so the index arithmetic below still simplifies
    // (a convolution's gradient reads through several pads and reshapes).
    for (std::size_t i = 0; i < sidx.size(); ++i) sidx[i] = clamp(sidx[i], k_.dim(s->shape[i]));
    const ExprId v = value(s, sidx);
    return k_.where(valid, v, zero(n->dtype));
  }

  // Whether index I lies in [0, SIZE). (Each operand built before the expression that uses it,
  // so every build numbers the kernel's expressions the same.)
  ExprId in_range(ExprId i, ExprId size) {
    const ExprId below = k_.binary(EOp::Cmplt, i, k_.constant_int(0));
    const ExprId not_below = k_.binary(EOp::Cmpeq, below, k_.constant_bool(false));
    return k_.binary(EOp::And, not_below, k_.binary(EOp::Cmplt, i, size));
  }

  // Index I clamped into [0, SIZE).
  ExprId clamp(ExprId i, ExprId size) {
    const ExprId low = k_.binary(EOp::Max, i, k_.constant_int(0));
    return k_.binary(EOp::Min, low, k_.binary(EOp::Add, size, k_.constant_int(-1)));
  }
};

}  // namespace

std::vector<Opts> tile_candidates(const schedule::ScheduledKernel& k,
                                  const std::unordered_set<const Node*>& materialized, const Lowering& how,
                                  const std::vector<std::int64_t>& rows, const std::vector<std::int64_t>& cols) {
  Lowering plain = how;
  plain.opts = Opts{};
  return Lowerer(k, materialized, plain).tile_candidates(rows, cols);
}

namespace {

// The work of one iteration of a statement list: its statements, loops counted by extent (a
// loop whose extent depends on an outer loop's variable, as a peel makes, or on an
// accumulator, as a gate of build_recompute_blocked, by its largest).
Dim work_of(const Kernel& k, const std::vector<Stmt>& body) {
  Dim w = 0;
  for (const Stmt& s : body) {
    if (s.kind != Stmt::Kind::Loop) {
      w = w + Dim(1);
      continue;
    }
    const passes::Uses uses = passes::uses_of(k, s.extent);
    const bool varies = !uses.loops.empty() || uses.acc || uses.load;
    const Dim extent = varies ? Dim(std::max<std::int64_t>(k.range(s.extent).hi.value_or(1), 0)) : loop_extent(k, {&s});
    w = w + extent * work_of(k, s.body);
  }
  return w;
}

}  // namespace

Lowered lower(const schedule::ScheduledKernel& k, const std::unordered_set<const Node*>& materialized,
              const Lowering& how) {
  Lowered l = Lowerer(k, materialized, how).run();
  auto after = [&](const char* pass, const std::string& what) {
    verify(l.kernel, what);
    if (how.dump_after == "all" || how.dump_after == pass) {
      tl::log("tensorlisp: lowering %s, after %s:\n%s", tensor::node_str(k.out, 4).c_str(), what.c_str(),
              l.kernel.str().c_str());
    }
  };
  after("build", l.opts.empty() || l.opts.front().kind != Opt::Kind::Interchange ? "build" : "build (interchange)");
  bool moved = false;  // loops changed: the parallel loop's extent and work are taken again
  std::optional<Opt> group;  // an explicit (group G), applied last
  for (const Opt& o : l.opts) {
    if (o.kind == Opt::Kind::Interchange) continue;
    if (o.kind == Opt::Kind::Group) {
      if (how.target != Target::Gpu) {
        throw ConditionError("optimizer-error",
                             "opt " + opt_str(o) + ": only GPU kernels split reduces across threads");
      }
      group = o;
      continue;
    }
    if (how.target == Target::Gpu && o.kind == Opt::Kind::Pack) {
      throw ConditionError("optimizer-error",
                           "opt " + opt_str(o) + ": GPU kernels have no scratch memory to pack into");
    }
    apply_opt(l.kernel, o);
    moved = true;
    after(opt_name(o.kind), opt_str(o));
  }
  if (moved && how.target == Target::Cpu) {
    l.parallel_extent = 1;
    l.work_per_iteration = work_of(l.kernel, l.kernel.body);
    for (const Stmt& s : l.kernel.body) {
      if (s.kind == Stmt::Kind::Loop && s.parallel) {
        l.parallel_extent = loop_extent(l.kernel, {&s});
        l.work_per_iteration = work_of(l.kernel, s.body);
      }
    }
  }
  if (how.target == Target::Gpu) {
    // The thread-group split: as the opts say, or as lowering chooses (then added to them, so
    // the kernel's opts say what it runs).
    Lowering split = how;
    if (group) split.group = static_cast<int>(group->amount);
    split_reduces(l.kernel, split);
    if (group && group->amount > 0 && l.kernel.group == 0) {
      throw ConditionError("optimizer-error", "opt " + opt_str(*group) +
                                                  ": no reduce of this kernel is long enough, or reads memory in "
                                                  "the right order, to split across a thread group");
    }
    if (!group && l.kernel.group > 0) l.opts.push_back(Opt::group(l.kernel.group));
    after("group-reduce", group ? opt_str(*group) : l.kernel.group > 0 ? opt_str(l.opts.back()) : "group-reduce");
    l.group = l.kernel.group;
    l.parallel_extent = gpu_thread_count(l.kernel);
    l.work_per_iteration = 1;
  }
  return l;
}

}  // namespace tl::codegen
