// SPDX-License-Identifier: Apache-2.0
// The reference executor. Each data-producing node is computed into a contiguous host
// buffer; movement ops are never executed, only composed into the views their consumers
// read through. Floats compute in double and round on store; integers compute in 64 bits
// and wrap on store.
#include "runtime/reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>

#include "runtime/elements.h"
#include "support/fftw.h"
#include "support/lapack.h"
#include "tensor/semantics.h"

namespace tl::runtime {

using namespace tl::tensor;

namespace {

[[noreturn]] void fail(const char* type, const std::string& msg) { throw GraphError(type, msg); }

bool produces_data(const Node* n) { return op_info(n->op).group != OpGroup::Movement; }
const Node* data_source(const Node* n) {
  while (!produces_data(n)) n = n->src[0].get();
  return n;
}

// A source as its consumer reads it: the base buffer and the composed views.
struct Access {
  const Buffer* buf;
  ConcreteViewStack views;
  bool simple;
  std::vector<std::int64_t> strides;
  std::int64_t offset;
  // Buffer element for index idx, or -1 in padding.
  std::int64_t at(const std::int64_t* idx) const {
    if (simple) {
      std::int64_t k = offset;
      for (std::size_t i = 0; i < strides.size(); ++i) k += idx[i] * strides[i];
      return k;
    }
    std::int64_t k;
    return views.index(idx, k) ? k : -1;
  }
};

// Advances a row-major multi-index; false after the last one.
bool next_index(std::vector<std::int64_t>& idx, const std::vector<std::int64_t>& shape) {
  for (std::size_t i = idx.size(); i-- > 0;) {
    if (++idx[i] < shape[i]) return true;
    idx[i] = 0;
  }
  return false;
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? " " : "") + std::to_string(shape[i]);
  return s + ")";
}

std::int64_t numel(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

double fmax_nan(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == 0 && b == 0) return a + b;  // +0 unless both are -0 (ops.def)
  return a > b ? a : b;
}

std::uint64_t u(std::int64_t v) { return static_cast<std::uint64_t>(v); }

class Executor {
 public:
  explicit Executor(Bindings b) : bindings_(std::move(b)) {}

  // Computes every root, each node once. Assigns write their targets only after everything
  // is computed, so every read sees the data from before the realize's writes (issue 19).
  std::vector<std::shared_ptr<Buffer>> run(const std::vector<const Node*>& roots) {
    std::vector<const Node*> order;
    std::unordered_set<const Node*> seen, keep;
    for (const Node* root : roots) {
      keep.insert(data_source(root));
      for (const Node* n : topo_order(root)) {
        if (seen.insert(n).second) order.push_back(n);
      }
    }
    for (const Node* n : order) {
      for (const Node* s : data_inputs(n)) ++uses_[s];
    }
    for (const Node* n : order) {
      values_[n] = compute(n);
      for (const Node* s : data_inputs(n)) {
        if (--uses_[s] == 0 && !keep.count(s)) values_.erase(s);
      }
    }
    for (const auto& [target, value] : writes_) target->buffer->set_bytes(value->bytes());  // a device copy is stale now
    std::vector<std::shared_ptr<Buffer>> out;
    for (const Node* root : roots) {
      const Node* d = data_source(root);
      std::shared_ptr<Buffer> b = d->op == Op::Assign ? d->src[0]->buffer : values_[d];
      out.push_back(produces_data(root) ? b : materialize(root));
    }
    return out;
  }

 private:
  Bindings bindings_;
  std::vector<std::pair<const Node*, std::shared_ptr<Buffer>>> writes_;  // assigns' (target, value)
  std::unordered_map<const Node*, std::shared_ptr<Buffer>> values_;
  std::unordered_map<const Node*, int> uses_;

  static std::vector<const Node*> data_inputs(const Node* n) {
    std::vector<const Node*> out;
    if (n->cached()) return out;
    for (const auto& s : n->src) out.push_back(data_source(s.get()));
    return out;
  }

  // Data-producing nodes in dependency order (iterative, for deep graphs).
  static std::vector<const Node*> topo_order(const Node* root) {
    std::vector<const Node*> order;
    std::unordered_map<const Node*, bool> done;
    std::vector<std::pair<const Node*, std::size_t>> stack{{data_source(root), 0}};
    while (!stack.empty()) {
      auto& [n, next] = stack.back();
      auto inputs = data_inputs(n);
      if (next < inputs.size()) {
        const Node* s = inputs[next++];
        if (!done.count(s)) {
          done[s] = false;
          stack.emplace_back(s, 0);
        }
        continue;
      }
      if (!done[n]) {
        done[n] = true;
        order.push_back(n);
      }
      stack.pop_back();
    }
    return order;
  }

  std::vector<std::int64_t> concrete(const Shape& s) const {
    std::vector<std::int64_t> out;
    for (const auto& d : s) {
      std::int64_t v = d.eval(bindings_);
      if (v < 0) fail("shape-error", "realize: dimension " + d.str() + " is negative (" + std::to_string(v) + ")");
      out.push_back(v);
    }
    return out;
  }

  Access access(const Node* n) {
    const Node* base = nullptr;
    ViewStack vs = view_of(n, &base);
    Access a{values_.at(base).get(), ConcreteViewStack(vs, bindings_), false, {}, 0};
    check_bounds(n, a, base);
    if (a.views.is_simple()) {
      a.simple = true;
      a.strides = a.views.views()[0].strides;
      a.offset = a.views.views()[0].offset;
    }
    return a;
  }

  // Symbolic shrinks are checked here, once their sizes are known.
  void check_bounds(const Node* n, const Access&, const Node*) {
    for (const Node* m = n; !produces_data(m); m = m->src[0].get()) {
      if (m->op != Op::Shrink) continue;
      auto in = concrete(m->src[0]->shape);
      for (std::size_t i = 0; i < m->ranges.size(); ++i) {
        std::int64_t b = m->ranges[i].first.eval(bindings_);
        std::int64_t e = m->ranges[i].second.eval(bindings_);
        if (b < 0 || e < b || e > in[i]) {
          fail("index-error", "shrink: range [" + std::to_string(b) + ", " + std::to_string(e) +
                                  ") out of bounds for axis " + std::to_string(i) + " of size " + std::to_string(in[i]));
        }
      }
    }
  }

  std::shared_ptr<Buffer> materialize(const Node* n) {
    if (tensor::is_quantized(n->dtype)) {
      // Blocks are never computed: a copy of the data is the data; a view is an error, as in
      // the JIT (the graph dequantizes quantized operands of every op but the views).
      const Node* d = n;
      while (d->op == Op::Copy) d = d->src[0].get();
      if (d->op == Op::Buffer) return d->buffer;
      fail("dtype-error", quantized_result_message(n->dtype));
    }
    auto shape = concrete(n->shape);
    auto out = allocate_buffer(n->dtype, shape);
    if (numel(shape) == 0) return out;
    Access a = access(n);
    std::vector<std::int64_t> idx(shape.size(), 0);
    std::int64_t k = 0;
    do {
      std::int64_t at = a.at(idx.data());
      store_bits(*out, k++, at < 0 ? 0 : load_bits(*a.buf, at));
    } while (next_index(idx, shape));
    return out;
  }

  // The data of assign N's target with the elements its view (src[2]) shows replaced by
  // VALUE's, in the view's row-major order.
  std::shared_ptr<Buffer> write_through_view(const Node* n, const Buffer& value, const std::vector<std::int64_t>& shape) {
    auto out = allocate_buffer(n->dtype, shape);
    const Buffer& old = *n->src[0]->buffer;
    if (old.size_bytes() > 0) std::memcpy(out->data(), old.data(), old.size_bytes());
    const Node* base = nullptr;
    ConcreteViewStack vs(view_of(n->src[2].get(), &base), bindings_);
    auto view_shape = concrete(n->src[2]->shape);
    if (numel(view_shape) == 0) return out;
    std::vector<std::int64_t> idx(view_shape.size(), 0);
    std::int64_t k = 0;
    do {
      std::int64_t at = 0;
      if (vs.index(idx.data(), at)) store_bits(*out, at, load_bits(value, k));
      ++k;
    } while (next_index(idx, view_shape));
    return out;
  }

  // An external kernel: the linear-algebra ones (LAPACK's) and the Fourier transforms
  // (FFTW's), as the CPU backend runs them.
  std::shared_ptr<Buffer> external(const Node* n, const std::vector<std::int64_t>& shape) {
    if (fftw::is_kernel(n->name)) {
      const Node* s = n->src.at(0).get();
      if (s->dtype != DType::F32 && s->dtype != DType::F64) {
        fail("type-error", n->name + ": the operand must be f32 or f64, got " + std::string(dtype_name(s->dtype)));
      }
      // The node's declared type and shape must be the transform's: FFTW writes all of it.
      std::string why;
      const std::vector<std::int64_t> want = fftw::output_shape(n->name, {concrete(s->shape)}, why);
      if (!why.empty()) fail("shape-error", why);
      if (want != shape || n->dtype != s->dtype) {
        fail("shape-error", n->name + ": the result must be " + std::string(dtype_name(s->dtype)) + " " +
                                shape_str(Shape(want.begin(), want.end())) + ", the extern declares " +
                                std::string(dtype_name(n->dtype)) + " " + shape_str(n->shape));
      }
      std::shared_ptr<Buffer> in = materialize(s);
      auto out = allocate_buffer(n->dtype, shape);
      if (std::string why = fftw::run(n->name, out->data(), {{s->dtype == DType::F64, concrete(s->shape), in->data()}});
          !why.empty()) {
        fail("device-error", why);
      }
      return out;
    }
    if (!lapack::is_kernel(n->name)) {
      std::string known;
      for (const std::string& k : lapack::kernel_names()) known += (known.empty() ? "" : ", ") + k;
      for (const std::string& k : fftw::kernel_names()) known += ", " + k;
      fail("device-error",
           "extern: the reference executor has no kernel named \"" + n->name + "\" (it has: " + known + ")");
    }
    std::vector<std::shared_ptr<Buffer>> keep;
    std::vector<lapack::Operand> srcs;
    for (const auto& s : n->src) {
      if (s->dtype != DType::F32 && s->dtype != DType::F64) {
        fail("type-error", n->name + ": the operands must be f32 or f64, got " + std::string(dtype_name(s->dtype)));
      }
      keep.push_back(materialize(s.get()));
      srcs.push_back({s->dtype == DType::F64, concrete(s->shape), keep.back()->data()});
    }
    auto out = allocate_buffer(n->dtype, shape);
    bool stopped = false, input_error = false;
    if (std::string why = lapack::run(n->name, out->data(), srcs, {}, stopped, input_error); !why.empty()) {
      fail(input_error ? "value-error" : "device-error", why);
    }
    return out;
  }

  std::shared_ptr<Buffer> compute(const Node* n) {
    if (auto c = n->cached()) return c;
    auto shape = concrete(n->shape);
    const std::int64_t count = numel(shape);
    switch (n->op) {
      case Op::Buffer: {
        if (static_cast<std::int64_t>(n->buffer->count()) != count) {
          fail("shape-error", "realize: buffer #" + std::to_string(n->id) + " holds " + std::to_string(n->buffer->count()) +
                                  " elements but its shape " + shape_str(n->shape) + " needs " + std::to_string(count));
        }
        return n->buffer;
      }
      case Op::Copy: return materialize(n->src[0].get());
      case Op::Assign: {
        // The assign's value is the new data; the target gets it once all is computed.
        auto value = materialize(n->src[1].get());
        if (n->src.size() == 3) value = write_through_view(n, *value, shape);
        writes_.emplace_back(n->src[0].get(), value);
        return value;
      }
      case Op::Extern: return external(n, shape);
      case Op::Reduce: return reduce(n, shape);
      case Op::Gather: return gather(n, shape);
      case Op::ScatterAdd: return scatter_add(n, shape);
      case Op::Reshape:
      case Op::Permute:
      case Op::Expand:
      case Op::Pad:
      case Op::Shrink:
      case Op::Flip: return materialize(n);  // a view realized on its own
      case Op::Const:
      case Op::Iota:
#include "tensor/elementwise_cases.inc"
        break;
    }
    auto out = allocate_buffer(n->dtype, shape);
    if (count == 0) return out;
    if (n->op == Op::Const) {
      for (std::int64_t k = 0; k < count; ++k) {
        if (is_float(n->dtype)) store_float(*out, k, n->fvalue);
        else store_int(*out, k, n->ivalue);
      }
      return out;
    }
    std::vector<Access> in;
    for (const auto& s : n->src) in.push_back(access(s.get()));
    std::vector<std::int64_t> idx(shape.size(), 0);
    std::int64_t k = 0;
    if (n->op == Op::Iota) {
      do store_int_or_float(*out, k++, idx[n->axes[0]]);
      while (next_index(idx, shape));
      return out;
    }
    if (n->op == Op::Bitcast || n->op == Op::Where) {
      // They move bits untouched (a NaN's payload too), which is what semantics.h says of them.
      do {
        const std::size_t from = n->op == Op::Bitcast ? 0 : (load_int_at(in[0], idx) != 0 ? 1 : 2);
        const std::int64_t at = in[from].at(idx.data());
        store_bits(*out, k++, at < 0 ? 0 : load_bits(*in[from].buf, at));
      } while (next_index(idx, shape));
      return out;
    }
    // Where's operands have the dtype of its second source; every other op's, of its first.
    DType operand = n->src[n->op == Op::Where ? 1 : 0]->dtype;
    if (tensor::is_quantized(operand)) operand = DType::F32;  // read as f32 (load_float)
    std::vector<tensor::Scalar> x(n->src.size());
    do {
      for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int64_t at = in[i].at(idx.data());
        if (reads_float(in[i].buf->dtype)) x[i] = {0, at < 0 ? 0.0 : load_float(*in[i].buf, at)};
        else x[i] = {at < 0 ? 0 : load_int(*in[i].buf, at), 0};
      }
      const tensor::Scalar v = tensor::evaluate(n->op, operand, n->dtype, x);
      if (is_float(n->dtype)) store_float(*out, k, v.f);
      else store_int(*out, k, v.i);
      ++k;
    } while (next_index(idx, shape));
    return out;
  }

  static std::int64_t load_int_at(const Access& a, const std::vector<std::int64_t>& idx) {
    const std::int64_t at = a.at(idx.data());
    return at < 0 ? 0 : load_int(*a.buf, at);
  }

  static void store_int_or_float(Buffer& b, std::int64_t k, std::int64_t v) {
    if (is_float(b.dtype)) store_float(b, k, static_cast<double>(v));
    else store_int(b, k, v);
  }

  // Element i is the source's element at i with the gather's axis replaced by the index
  // tensor's element i; an index outside the axis reads 0.
  std::shared_ptr<Buffer> gather(const Node* n, const std::vector<std::int64_t>& shape) {
    auto out = allocate_buffer(n->dtype, shape);
    if (numel(shape) == 0) return out;
    const auto axis = static_cast<std::size_t>(n->axes[0]);
    const std::int64_t size = concrete(n->src[0]->shape)[axis];
    Access x = access(n->src[0].get()), index = access(n->src[1].get());
    std::vector<std::int64_t> idx(shape.size(), 0), at_x;
    std::int64_t k = 0;
    do {
      const std::int64_t i = load_int_at(index, idx);
      std::int64_t at = -1;
      if (i >= 0 && i < size) {
        at_x = idx;
        at_x[axis] = i;
        at = x.at(at_x.data());
      }
      store_bits(*out, k++, at < 0 ? 0 : load_bits(*x.buf, at));
    } while (next_index(idx, shape));
    return out;
  }

  // The source's data, then each value added where its index points, in row-major order.
  std::shared_ptr<Buffer> scatter_add(const Node* n, const std::vector<std::int64_t>& shape) {
    auto out = materialize(n->src[0].get());
    auto ishape = concrete(n->src[1]->shape);
    if (numel(ishape) == 0) return out;
    const auto axis = static_cast<std::size_t>(n->axes[0]);
    Access index = access(n->src[1].get()), values = access(n->src[2].get());
    std::vector<std::int64_t> idx(ishape.size(), 0), strides(shape.size(), 1);
    for (std::size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    const DType t = n->dtype;
    do {
      const std::int64_t i = load_int_at(index, idx);
      if (i < 0 || i >= shape[axis]) continue;
      std::int64_t at = 0;
      for (std::size_t d = 0; d < idx.size(); ++d) at += (d == axis ? i : idx[d]) * strides[d];
      const std::int64_t from = values.at(idx.data());
      if (is_float(t)) {
        const double v = tensor::evaluate(Op::Add, t, t, std::vector<tensor::Scalar>{{0, load_float(*out, at)}, {0, from < 0 ? 0.0 : load_float(*values.buf, from)}}).f;
        store_float(*out, at, v);
      } else {
        const std::int64_t v = tensor::evaluate(Op::Add, t, t, std::vector<tensor::Scalar>{{load_int(*out, at), 0}, {from < 0 ? 0 : load_int(*values.buf, from), 0}}).i;
        store_int(*out, at, v);
      }
    } while (next_index(idx, ishape));
    return out;
  }

  std::shared_ptr<Buffer> reduce(const Node* n, const std::vector<std::int64_t>& out_shape) {
    const Node* src = n->src[0].get();
    auto in_shape = concrete(src->shape);
    const std::int64_t count = numel(out_shape);
    auto out = allocate_buffer(n->dtype, out_shape);
    const bool fl = is_float(n->dtype);
    const bool prod_f32 = fl && n->dtype != DType::F64;
    std::vector<double> facc(fl ? count : 0);
    std::vector<std::int64_t> iacc(fl ? 0 : count);
    const Scalar init = reduce_identity(n->reduce_kind, n->dtype);
    const double f0 = init.f;
    const std::int64_t i0 = init.i;
    std::fill(facc.begin(), facc.end(), f0);
    std::fill(iacc.begin(), iacc.end(), i0);
    if (numel(in_shape) > 0) {
      Access a = access(src);
      std::vector<bool> reduced(in_shape.size(), false);
      for (auto ax : n->axes) reduced[ax] = true;
      std::vector<std::int64_t> out_strides(in_shape.size(), 0);
      std::int64_t st = 1;
      for (std::size_t i = in_shape.size(); i-- > 0;) {
        out_strides[i] = reduced[i] ? 0 : st;
        st *= out_shape[i];
      }
      std::vector<std::int64_t> idx(in_shape.size(), 0);
      do {
        std::int64_t o = 0;
        for (std::size_t i = 0; i < idx.size(); ++i) o += idx[i] * out_strides[i];
        std::int64_t at = a.at(idx.data());
        if (fl) {
          double v = at < 0 ? 0.0 : load_float(*a.buf, at);
          double& acc = facc[o];
          switch (n->reduce_kind) {
            case ReduceKind::Sum: acc += v; break;
            // A product of floats narrower than f64 is rounded to f32 after each factor, as the
            // JIT's (and PyTorch's) f32 accumulator does: a running product leaves the range of
            // f32 (to inf, or to 0) where one in double would come back into it.
            case ReduceKind::Prod: acc = prod_f32 ? static_cast<double>(static_cast<float>(acc * v)) : acc * v; break;
            case ReduceKind::Max: acc = fmax_nan(acc, v); break;
          }
        } else {
          std::int64_t v = at < 0 ? 0 : load_int(*a.buf, at);
          std::int64_t& acc = iacc[o];
          switch (n->reduce_kind) {
            case ReduceKind::Sum: acc = static_cast<std::int64_t>(u(acc) + u(v)); break;
            case ReduceKind::Prod: acc = static_cast<std::int64_t>(u(acc) * u(v)); break;
            case ReduceKind::Max: acc = std::max(acc, v); break;
          }
        }
      } while (next_index(idx, in_shape));
    }
    for (std::int64_t k = 0; k < count; ++k) {
      if (fl) store_float(*out, k, facc[k]);
      else store_int(*out, k, iacc[k]);
    }
    return out;
  }
};

}  // namespace

Bindings collect_bindings(const Node* root, const Bindings& extra) {
  Bindings b = extra;
  std::vector<const Node*> stack{root};
  std::unordered_map<const Node*, bool> seen;
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (seen[n]) continue;
    seen[n] = true;
    for (const auto& [name, value] : n->bindings) {
      auto [it, inserted] = b.emplace(name, value);
      if (!inserted && it->second != value) {
        fail("shape-error", "realize: symbolic dimension " + name + " is bound to both " + std::to_string(it->second) +
                                " and " + std::to_string(value));
      }
    }
    if (n->cached()) continue;
    for (const auto& s : n->src) stack.push_back(s.get());
  }
  return b;
}

std::string unbound_message(const std::string& name) {
  return "realize: symbolic dimension " + name + " has no value (give it with :bind, e.g. (realize x :bind '((" +
         name + " . 8))))";
}

void check_graph(const Node* root, const Bindings& b) {
  std::vector<const Node*> stack{root};
  std::unordered_map<const Node*, bool> seen;
  auto concrete = [&](const Dim& d) {
    std::int64_t v = d.eval(b);
    if (v < 0) fail("shape-error", "realize: dimension " + d.str() + " is negative (" + std::to_string(v) + ")");
    return v;
  };
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (seen[n]) continue;
    seen[n] = true;
    std::vector<std::int64_t> dims;
    for (const auto& d : n->shape) dims.push_back(concrete(d));
    // Variables bound to large values can make a shape too large for its byte count (issue 19).
    if (!checked_shape_bytes(n->dtype, dims)) {
      fail("shape-error", "realize: shape " + shape_str(n->shape) + " of a " +
                              std::string(op_name(n->op)) + " is too large once bound: " +
                              shape_text(dims));
    }
    std::int64_t count = 1;
    for (std::int64_t d : dims) count *= d;
    if (n->cached()) continue;
    if (n->op == Op::Buffer && static_cast<std::int64_t>(n->buffer->count()) != count) {
      fail("shape-error", "realize: buffer #" + std::to_string(n->id) + " holds " + std::to_string(n->buffer->count()) +
                              " elements but its shape " + shape_str(n->shape) + " needs " + std::to_string(count));
    }
    if (n->op == Op::Shrink) {
      const Node* s = n->src[0].get();
      for (std::size_t i = 0; i < n->ranges.size(); ++i) {
        std::int64_t lo = n->ranges[i].first.eval(b);
        std::int64_t hi = n->ranges[i].second.eval(b);
        std::int64_t size = concrete(s->shape[i]);
        if (lo < 0 || hi < lo || hi > size) {
          fail("index-error", "shrink: range [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                  ") out of bounds for axis " + std::to_string(i) + " of size " + std::to_string(size));
        }
      }
    }
    for (const auto& s : n->src) stack.push_back(s.get());
  }
}

std::shared_ptr<Buffer> realize_reference(const Node* root, const Bindings& extra) {
  if (auto c = root->cached()) return c;
  return realize_reference_many({root}, extra)[0];
}

std::vector<std::shared_ptr<Buffer>> realize_reference_many(const std::vector<const Node*>& roots, const Bindings& extra) {
  Bindings b;
  for (const Node* root : roots) {
    for (const auto& [k, v] : collect_bindings(root, extra)) b.emplace(k, v);
  }
  try {
    // Symbolic ranges are checked against the values bound now, before anything is read or
    // written.
    for (const Node* root : roots) check_graph(root, b);
    return Executor(std::move(b)).run(roots);
  } catch (const tensor::UnboundDim& e) {
    fail("shape-error", unbound_message(e.what()));
  }
}

}  // namespace tl::runtime
