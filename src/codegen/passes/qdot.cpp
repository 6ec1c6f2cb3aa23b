// SPDX-License-Identifier: Apache-2.0
// (qdot L F): a float sum over loop L whose terms are products of two small integers and a
// scale, computed as integer dot products of four bytes (EOp::Dot4: x86's vpdpbusd, PTX's
// dp4a). It is the inner product of quantized blocks: an activation quantized to int8 per
// block (its scale d_x) times a weight's block of int8 or 4-bit codes (scale d_w), whose
// terms are d_x * d_w * x_j * w_j.
//
// L (innermost, constant extent E, a multiple of F) holds updates of float sums (one, or the
// rows of an upcast register tile), each defined outside L with the value 0 and read by none of
// L's statements. Each term must be a product whose factors
// are, for every run of four consecutive iterations, either the same in all four (the scale S
// of a block: no block boundary may fall inside a run) or one of two integer factors A and B,
// each the float conversion of a byte-sized value read from consecutive bytes of memory
// (int8 or uint8 elements, or a quantized buffer's packed codes: a byte, its low or high bits,
// plus a constant). L becomes a loop over E/F blocks (marked lanes) that updates F/4 lane sums,
// lane g with S * float(A_4g B_4g + ... + A_4g+3 B_4g+3), the integer sum one Dot4 of words of
// four bytes loaded whole; after L the lanes are added into the sum, as by lanes.
//
// The integer sums are exact and the products in them are never rounded, so the result
// differs from the plain nest's only by the order of the float additions and the rounding of S
// times the sum (each of the plain nest's terms rounds twice; on the CPU the multiply and the
// lane's add may fuse): as lanes regroup a sum.
#include <algorithm>
#include <map>
#include <set>

#include "codegen/passes/edit.h"
#include "codegen/passes/passes.h"

namespace tl::codegen {

namespace {

// Four bytes in a word: byte t is lane t's value less `offset`, read as unsigned (u8) or
// signed (s8), and when `clamped` (signed only) as max(byte, -127): a quantized activation,
// whose bytes a Dot4 may then multiply by signed bytes (kDot4SignedA). Read as unsigned, no
// byte exceeds `max` (a nibble's is 15).
struct Bytes {
  ExprId word = -1;  // u32
  bool is_signed = false;
  bool clamped = false;
  std::int64_t offset = 0;
  std::int64_t max = 255;
  std::int64_t lo() const { return (is_signed ? (clamped ? -127 : -128) : 0) + offset; }
  std::int64_t hi() const { return (is_signed ? 127 : 255) + offset; }
};

// Whether integer dtype t holds every value of [lo, hi] (so that arithmetic in t never wraps).
bool holds(DType t, std::int64_t lo, std::int64_t hi) {
  const int bits = static_cast<int>(tensor::dtype_size(t) * 8);
  if (tensor::dtype_category(t) == tensor::DCat::Unsigned) {
    return lo >= 0 && (bits >= 63 || hi < (std::int64_t{1} << bits));
  }
  if (bits >= 64) return true;
  return lo >= -(std::int64_t{1} << (bits - 1)) && hi < (std::int64_t{1} << (bits - 1));
}

// The most an offset may move a byte's value: the terms it adds stay far from i32's limits.
constexpr std::int64_t kMaxOffset = 1024;

class QdotBuilder {
 public:
  QdotBuilder(Kernel& k, std::string opt) : k_(k), opt_(std::move(opt)) {}

  // The factors of a product (f32 multiplications flattened), in a canonical order.
  std::vector<ExprId> factors(ExprId e, DType t) {
    std::vector<ExprId> out;
    std::vector<ExprId> stack{e};
    while (!stack.empty()) {
      const ExprId x = stack.back();
      stack.pop_back();
      const Expr& ex = k_.expr(x);
      if (ex.op == EOp::Mul && ex.dtype == t) {
        stack.push_back(ex.src[0]);
        stack.push_back(ex.src[1]);
      } else {
        out.push_back(x);
      }
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  // The word of the byte-sized integer values v[0..3] (consecutive in memory), or none.
  std::optional<Bytes> bytes(const std::vector<ExprId>& v) {
    const Expr e = k_.expr(v[0]);
    for (ExprId id : v) {
      const Expr& x = k_.expr(id);
      if (x.op != e.op || x.dtype != e.dtype || x.arg != e.arg) return std::nullopt;
    }
    auto source = [&](int i) {
      std::vector<ExprId> s;
      for (ExprId id : v) s.push_back(k_.expr(id).src[i]);
      return s;
    };
    // The one operand that varies and the constant of a binary op (in either order).
    auto split_const = [&](std::vector<ExprId>& var) -> std::optional<std::int64_t> {
      for (int side = 0; side < 2; ++side) {
        auto c = k_.as_const(e.src[side]);
        if (!c) continue;
        bool same = true;
        for (ExprId id : v) same = same && k_.expr(id).src[side] == e.src[side];
        if (!same) continue;
        var = source(1 - side);
        return c;
      }
      return std::nullopt;
    };
    switch (e.op) {
      case EOp::Load: {
        if (e.dtype != DType::U8 && e.dtype != DType::I8) return std::nullopt;
        if (e.ival == 1) return std::nullopt;
        for (std::size_t t = 1; t < v.size(); ++t) {
          auto d = k_.constant_difference(e.src[0], k_.expr(v[t]).src[0]);
          if (!d || *d != static_cast<std::int64_t>(t)) return std::nullopt;
        }
        // One-byte elements: the element index is the byte offset.
        return Bytes{k_.load_bytes(e.arg, e.src[0], DType::U32), e.dtype == DType::I8, 0};
      }
      case EOp::Cast: {
        // Between integer types, a cast that keeps every value the bytes can take.
        const DType from = k_.expr(e.src[0]).dtype;
        const bool ints =
            !tensor::is_float(from) && !tensor::is_float(e.dtype) && from != DType::Bool && e.dtype != DType::Bool;
        if (!ints) return std::nullopt;
        auto b = bytes(source(0));
        if (!b || !holds(e.dtype, b->lo(), b->hi())) return std::nullopt;
        return b;
      }
      case EOp::Add: {
        // A constant added without wrapping in the add's dtype.
        std::vector<ExprId> var;
        auto c = split_const(var);
        if (!c || *c < -kMaxOffset || *c > kMaxOffset) return std::nullopt;
        auto b = bytes(var);
        if (!b || !holds(e.dtype, b->lo() + *c, b->hi() + *c)) return std::nullopt;
        b->offset += *c;
        if (b->offset < -kMaxOffset || b->offset > kMaxOffset) return std::nullopt;
        return b;
      }
      case EOp::And: {
        std::vector<ExprId> var;
        auto c = split_const(var);
        if (!c || *c < 0 || *c > 255) return std::nullopt;
        auto b = bytes(var);
        if (!b || b->is_signed || b->offset != 0) return std::nullopt;
        b->word = k_.binary(EOp::And, b->word, k_.constant_int(*c * 0x01010101, DType::U32));
        b->max = std::min(b->max, *c);
        return b;
      }
      case EOp::Idiv: {
        auto c = k_.as_const(e.src[1]);
        bool same = true;
        for (ExprId id : v) same = same && k_.expr(id).src[1] == e.src[1];
        if (!c || !same || *c <= 0 || (*c & (*c - 1)) != 0 || *c > 128) return std::nullopt;
        auto b = bytes(source(0));
        if (!b || b->is_signed || b->offset != 0) return std::nullopt;
        // Each byte shifted right, the bits of the next byte that come down cleared.
        const ExprId shifted = k_.binary(EOp::Idiv, b->word, k_.constant_int(*c, DType::U32));
        b->word = k_.binary(EOp::And, shifted, k_.constant_int((255 / *c) * 0x01010101, DType::U32));
        b->max /= *c;
        return b;
      }
      case EOp::Max: {
        // max(x, -127) of signed bytes: the clamp a Dot4 applies itself (kDot4ClampB).
        std::vector<ExprId> var;
        auto c = split_const(var);
        if (!c || *c != -127) return std::nullopt;
        auto b = bytes(var);
        if (!b || !b->is_signed || b->offset != 0 || !holds(e.dtype, -127, 127)) return std::nullopt;
        b->clamped = true;
        return b;
      }
      case EOp::Const:
      case EOp::LoopVar:
      case EOp::SymVar:
      case EOp::AccRead:
      case EOp::Min:
      case EOp::Dot4:
      case EOp::Neg:
      case EOp::Recip:
      case EOp::Sqrt:
      case EOp::Exp2:
      case EOp::Log2:
      case EOp::Sin:
      case EOp::Cos:
      case EOp::Bitcast:
      case EOp::Mul:
      case EOp::Mod:
      case EOp::Cmplt:
      case EOp::Cmpeq:
      case EOp::Or:
      case EOp::Xor:
      case EOp::Where: break;  // not a byte read the pass can put in a word
    }
    return std::nullopt;
  }

  // The integer of a factor: the float conversion of an integer value.
  std::optional<std::vector<ExprId>> integer(const std::vector<ExprId>& f) {
    std::vector<ExprId> out;
    for (ExprId id : f) {
      const Expr& x = k_.expr(id);
      if (x.op != EOp::Cast || !tensor::is_float(x.dtype)) return std::nullopt;
      const DType from = k_.expr(x.src[0]).dtype;
      if (tensor::is_float(from) || from == DType::Bool) return std::nullopt;
      out.push_back(x.src[0]);
    }
    return out;
  }

  // Sum over the four lanes of A*B as i32: Dot4 of A as unsigned and B as signed bytes, with the
  // offsets' terms: sum (a + oa)(b + ob) = sum ab + ob sum a + oa sum b + 4 oa ob. Signed A
  // times clamped B is one Dot4 of both as signed (kDot4SignedA); other signed A is A + 128
  // as unsigned, with its term.
  ExprId dot(Bytes a, Bytes b) {
    const ExprId flip = k_.constant_int(0x80808080, DType::U32);
    if (a.clamped) std::swap(a, b);  // only a Dot4's second word is clamped
    if (a.clamped) passes::reject(opt_, "both integer factors are clamped bytes");
    const ExprId zero = k_.constant_int(0, DType::I32);
    // o * sum x as one Dot4 of |o| in every byte (a shift and a multiply saved), negated when
    // o < 0; a Dot4 on one side's bytes needs the other side's: |o| <= 127 as a signed byte,
    // <= 255 as an unsigned one.
    auto scaled_sum = [&](std::int64_t o, const Bytes& x, bool as_signed) {
      const std::int64_t m = o < 0 ? -o : o;
      const bool fits = m <= (as_signed ? 255 : 127);
      const std::int64_t byte = fits ? m : 1;
      const ExprId splat = k_.constant_int(byte * 0x01010101, DType::U32);
      ExprId sum = as_signed ? k_.dot4(splat, x.word, zero, byte, x.clamped ? kDot4ClampB : 0)
                             : k_.dot4(x.word, splat, zero, x.max);
      if (!fits) sum = k_.binary(EOp::Mul, k_.constant_int(m, DType::I32), sum);
      return o < 0 ? k_.unary(EOp::Neg, sum, DType::I32) : sum;
    };
    if (a.is_signed && b.clamped) {
      ExprId c = k_.constant_int(4 * a.offset * b.offset, DType::I32);
      if (b.offset != 0) c = k_.binary(EOp::Add, c, scaled_sum(b.offset, a, true));
      if (a.offset != 0) c = k_.binary(EOp::Add, c, scaled_sum(a.offset, b, true));
      return k_.dot4(a.word, b.word, c, 255, kDot4SignedA | kDot4ClampB);
    }
    if (a.is_signed && !b.is_signed) std::swap(a, b);
    if (a.is_signed) {  // both signed: a + 128 is unsigned
      a.word = k_.binary(EOp::Xor, a.word, flip);
      a.is_signed = false;
      a.offset -= 128;
      a.max = 255;
    }
    if (!b.is_signed) {  // both unsigned: b - 128 is signed
      b.word = k_.binary(EOp::Xor, b.word, flip);
      b.is_signed = true;
      b.offset += 128;
      b.max = 255;
    }
    ExprId c = k_.constant_int(4 * a.offset * b.offset, DType::I32);
    if (b.offset != 0) c = k_.binary(EOp::Add, c, scaled_sum(b.offset, a, false));
    if (a.offset != 0) c = k_.binary(EOp::Add, c, scaled_sum(a.offset, b, true));
    return k_.dot4(a.word, b.word, c, a.max, b.clamped ? kDot4ClampB : 0);
  }

  // The term of lane g from its four copies' terms, or a reason it has none.
  ExprId lane(const std::vector<ExprId>& terms, DType t) {
    std::vector<std::vector<ExprId>> fs;
    for (ExprId term : terms) fs.push_back(factors(term, t));
    // Factors in all four copies, as many times as each has them: the scale.
    std::vector<ExprId> common;
    for (ExprId f : fs[0]) {
      if (std::count(common.begin(), common.end(), f) > 0) continue;
      auto times = std::count(fs[0].begin(), fs[0].end(), f);
      for (std::size_t c = 1; c < fs.size(); ++c) times = std::min(times, std::count(fs[c].begin(), fs[c].end(), f));
      for (std::ptrdiff_t t = 0; t < times; ++t) common.push_back(f);
    }
    std::vector<std::vector<ExprId>> rest(fs.size());
    for (std::size_t c = 0; c < fs.size(); ++c) {
      std::vector<ExprId> left = common;  // each common factor taken as often as it is common
      for (ExprId f : fs[c]) {
        auto it = std::find(left.begin(), left.end(), f);
        if (it != left.end()) {
          left.erase(it);
        } else {
          rest[c].push_back(f);
        }
      }
      if (rest[c].size() != 2) {
        passes::reject(opt_, "a term has " + std::to_string(rest[c].size()) +
                                 " factors that change within four iterations, not two integers");
      }
    }
    // The two integers in each copy, ordered by the first buffer each reads.
    auto first_buffer = [&](ExprId f) {
      std::int32_t slot = 1 << 30;
      k_.visit({f}, [&](ExprId, const Expr& x) {
        if (x.op == EOp::Load) slot = std::min(slot, x.arg);
        return true;
      });
      return slot;
    };
    std::vector<ExprId> side[2];
    for (auto& r : rest) {
      if (first_buffer(r[1]) < first_buffer(r[0])) std::swap(r[0], r[1]);
      side[0].push_back(r[0]);
      side[1].push_back(r[1]);
    }
    auto ia = integer(side[0]), ib = integer(side[1]);
    if (!ia || !ib)
      passes::reject(opt_,
                     "a changing factor is not a conversion of an integer to " + std::string(tensor::dtype_name(t)));
    auto a = bytes(*ia), b = bytes(*ib);
    if (!a || !b) {
      passes::reject(opt_, "an integer factor is not a byte read from consecutive memory (" +
                               k_.expr_str((!a ? *ia : *ib)[0]) + ")");
    }
    ExprId term = k_.unary(EOp::Cast, dot(*a, *b), t);
    if (common.empty()) return term;
    ExprId scale = common[0];
    for (std::size_t i = 1; i < common.size(); ++i) scale = k_.binary(EOp::Mul, scale, common[i]);
    return k_.binary(EOp::Mul, scale, term);
  }

 private:
  Kernel& k_;
  std::string opt_;
};

}  // namespace

void integer_dots(Kernel& kernel, std::int32_t loop, std::int64_t width) {
  // Built on a copy, so that a rejection leaves the kernel as it was (no new loop id).
  Kernel k = kernel;
  const std::string opt = "(qdot " + std::to_string(loop) + " " + std::to_string(width) + ")";
  passes::LoopPlace p = passes::find_loop(k, loop, opt);
  const std::string name = "i" + std::to_string(loop);
  const Stmt l = p.stmt();  // a copy: the kernel changes below
  if (width < 4 || width % 4 != 0 || width > kMaxUpcast) {
    passes::reject(opt, "the block must be a multiple of 4 iterations, at most " + std::to_string(kMaxUpcast));
  }
  if (l.parallel || l.group) passes::reject(opt, "loop " + name + " is a parallel loop");
  const auto extent = k.as_const(l.extent);
  if (!extent || *extent % width != 0) {
    passes::reject(opt, "loop " + name + "'s extent " + k.expr_str(l.extent) + " is not a multiple of " +
                            std::to_string(width));
  }
  if (l.body.empty()) passes::reject(opt, "loop " + name + " is empty");
  // Each statement an update of a float sum that starts at 0 and that no statement of L reads
  // (several: the rows of a register tile, whose activation words and corrections are shared).
  std::set<std::int32_t> updated;
  for (const Stmt& u : l.body) {
    if (u.kind != Stmt::Kind::AccUpdate || u.reduce != ReduceKind::Sum ||
        (u.dtype != DType::F32 && u.dtype != DType::F64) || !updated.insert(u.acc).second) {
      passes::reject(opt, "loop " + name + " must hold only updates of float sums, one per accumulator");
    }
  }
  std::map<std::int32_t, ExprId> inits;
  passes::each_stmt(k.body, [&](const Stmt& s) {
    if (s.kind == Stmt::Kind::AccDef && updated.count(s.acc) > 0) inits[s.acc] = s.value;
  });
  for (const Stmt& u : l.body) {
    auto it = inits.find(u.acc);
    if (it == inits.end() || k.expr(it->second).op != EOp::Const || k.expr(it->second).fval != 0.0) {
      passes::reject(opt, "acc" + std::to_string(u.acc) + " does not start at 0");
    }
    bool reads = false;
    k.visit({u.value}, [&](ExprId, const Expr& x) {
      reads = reads || (x.op == EOp::AccRead && updated.count(x.arg) > 0);
      return !reads;
    });
    if (reads) passes::reject(opt, "loop " + name + " reads a sum it updates");
  }

  QdotBuilder builder(k, opt);
  auto [block, block_var] = k.make_loop(k.constant_int(*extent / width));
  block.lanes = true;
  const std::size_t n = l.body.size();
  const std::int64_t groups = width / 4;
  std::vector<Stmt> defs;
  std::vector<std::vector<std::int32_t>> lanes(n);  // per update, its lanes' accumulators
  // Update by update (its lanes consecutive): the emitter's lane runs then take consecutive
  // statements, a vector register's worth, as one vector of one update's lanes.
  for (std::size_t u = 0; u < n; ++u) {
    for (std::int64_t g = 0; g < groups; ++g) {
      const Stmt& update = l.body[u];
      std::vector<ExprId> terms;
      for (std::int64_t t = 0; t < 4; ++t) {
        passes::Subst s;
        s.loops[loop] =
            k.binary(EOp::Add, k.binary(EOp::Mul, block_var, k.constant_int(width)), k.constant_int(4 * g + t));
        terms.push_back(passes::apply(k, update.value, s));
      }
      const ExprId term = builder.lane(terms, update.dtype);
      Stmt def{Stmt::Kind::AccDef};
      def.acc = k.new_acc();
      def.dtype = update.dtype;
      def.reduce = ReduceKind::Sum;
      def.value = inits.at(update.acc);
      defs.push_back(def);
      lanes[u].push_back(def.acc);
      Stmt add{Stmt::Kind::AccUpdate};
      add.acc = def.acc;
      add.dtype = update.dtype;
      add.reduce = ReduceKind::Sum;
      add.value = term;
      block.body.push_back(add);
    }
  }
  std::vector<Stmt> out = std::move(defs);
  out.push_back(std::move(block));
  // Each update's lanes added as a tree by halves, into its sum.
  for (std::size_t u = 0; u < n; ++u) {
    const Stmt& update = l.body[u];
    std::vector<ExprId> level;
    for (std::int32_t a : lanes[u]) level.push_back(k.acc_read(a, update.dtype));
    while (level.size() > 1) {
      const std::size_t half = level.size() / 2;
      std::vector<ExprId> next;
      for (std::size_t i = 0; i < half; ++i) next.push_back(k.binary(EOp::Add, level[i], level[i + half]));
      if (level.size() % 2 == 1) next.push_back(level.back());
      level = std::move(next);
    }
    Stmt total{Stmt::Kind::AccUpdate};
    total.acc = update.acc;
    total.dtype = update.dtype;
    total.reduce = ReduceKind::Sum;
    total.value = level.front();
    out.push_back(total);
  }
  p.list->erase(p.list->begin() + static_cast<std::ptrdiff_t>(p.index));
  p.list->insert(p.list->begin() + static_cast<std::ptrdiff_t>(p.index), std::make_move_iterator(out.begin()),
                 std::make_move_iterator(out.end()));
  kernel = std::move(k);
}

}  // namespace tl::codegen
