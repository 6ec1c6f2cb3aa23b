// SPDX-License-Identifier: Apache-2.0
// tl::Tensor: host arrays in, results out, over the interpreter's tensor values.
#include <cstring>

#include "bindings/tensor_value.h"
#include "eval/interp.h"
#include "support/check.h"
#include "tensorlisp/tensorlisp.hpp"

namespace tl {

namespace {

tensor::DType to_internal(DType t) { return *tensor::dtype_from_name(dtype_name(t)); }

DType to_public(tensor::DType t) {
  for (DType d : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::I16, DType::I32,
                  DType::I64, DType::U8, DType::U32, DType::Bool}) {
    if (to_internal(d) == t) return d;
  }
  TL_UNREACHABLE("tl::Tensor: a dtype with no public name");
}

[[noreturn]] void fail(const std::string& type, const std::string& message) {
  throw Error(ErrorKind::User, eval::error_phase(type), type, message);
}

std::string extents_str(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? " " : "") + std::to_string(shape[i]);
  return s + ")";
}

}  // namespace

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::F16: return "f16";
    case DType::BF16: return "bf16";
    case DType::I8: return "i8";
    case DType::I16: return "i16";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::U8: return "u8";
    case DType::U32: return "u32";
    case DType::Bool: return "bool";
  }
  return "?";
}

std::size_t dtype_size(DType t) { return tensor::dtype_size(to_internal(t)); }

Tensor::Tensor(Interpreter& lisp, const void* data, std::size_t bytes, const std::vector<std::int64_t>& shape,
               DType dtype) {
  std::size_t count = 1;
  for (std::int64_t d : shape) {
    if (d < 0) fail("value-error", "tl::Tensor: negative extent in shape " + extents_str(shape));
    count *= static_cast<std::size_t>(d);
  }
  if (count * dtype_size(dtype) != bytes) {
    fail("value-error", "tl::Tensor: shape " + extents_str(shape) + " of " + dtype_name(dtype) + " needs " +
                            std::to_string(count * dtype_size(dtype)) + " bytes, got " + std::to_string(bytes));
  }
  eval::Interp& in = lisp.internal();
  auto buf = std::make_shared<tensor::Buffer>(to_internal(dtype), count);
  if (bytes != 0) std::memcpy(buf->data(), data, bytes);
  if (dtype == DType::Bool) {
    for (auto& b : buf->bytes()) b = b != 0;  // any nonzero byte is true
  }
  in.heap.account_external(bytes);
  tensor::Shape s(shape.begin(), shape.end());
  eval::Interp::StackMark mark(in);
  in.push(tensor::make_tensor(in, tensor::runtime(in).graph.make_buffer(std::move(buf), s)));
  value_ = in.export_host(in.sp[-1]);
}

namespace {

// The tensor object behind a host value, or a type error.
tensor::TensorObj* tensor_of(const Value& v, const std::shared_ptr<detail::RootCell>& cell) {
  if (!cell || cell->interp == nullptr || !tensor::is_tensor(cell->value)) {
    fail("type-error", "tl::Tensor: expected a tensor, got " + v.type_name() + " " + v.repr());
  }
  return tensor::as_tensor(cell->value);
}

}  // namespace

Tensor::Tensor(const Value& v) : value_(v) { tensor_of(value_, value_.cell_); }

DType Tensor::dtype() const { return to_public(tensor_of(value_, value_.cell_)->node->dtype); }

int Tensor::ndim() const { return static_cast<int>(tensor_of(value_, value_.cell_)->node->shape.size()); }

std::vector<std::int64_t> Tensor::shape() const {
  const tensor::Node* n = tensor_of(value_, value_.cell_)->node.get();
  std::vector<std::int64_t> out;
  for (const auto& d : n->shape) {
    try {
      out.push_back(d.eval(n->bindings));  // a realized symbolic tensor keeps its values
    } catch (const tensor::UnboundDim&) {
      fail("shape-error", "tl::Tensor: the shape " + tensor::shape_str(n->shape) +
                              " is symbolic; realize the tensor with a value for each variable first");
    }
  }
  return out;
}

std::int64_t Tensor::numel() const {
  std::int64_t n = 1;
  for (std::int64_t d : shape()) n *= d;
  return n;
}

std::string Tensor::shape_string() const { return tensor::shape_str(tensor_of(value_, value_.cell_)->node->shape); }

void Tensor::realize(const std::map<std::string, std::int64_t>& bindings) {
  tensor::TensorObj* t = tensor_of(value_, value_.cell_);
  try {
    tensor::realize(*value_.cell_->interp, t, bindings);
  } catch (const ConditionError& e) {
    fail(e.type, std::string("realize: ") + e.what());
  } catch (const tensor::UnboundDim& e) {
    fail("shape-error", std::string("realize: ") + e.what());
  }
}

void Tensor::copy_to(void* dst, std::size_t bytes) const {
  const_cast<Tensor*>(this)->realize();
  tensor::TensorObj* t = tensor_of(value_, value_.cell_);
  const tensor::Buffer& b = *t->node->buffer;
  if (b.size_bytes() != bytes) {
    fail("value-error", "tl::Tensor::copy_to: the tensor " + tensor::shape_str(t->node->shape) + " of " +
                            std::string(tensor::dtype_name(b.dtype)) + " has " + std::to_string(b.size_bytes()) +
                            " bytes, the destination " + std::to_string(bytes));
  }
  if (bytes != 0) std::memcpy(dst, b.data(), bytes);
}

void Tensor::check_element_type(DType want) const {
  DType have = dtype();
  if (have != want) {
    fail("dtype-error", std::string("tl::Tensor::to_vector: the tensor is ") + dtype_name(have) +
                            ", the element type asked for is " + dtype_name(want));
  }
}

}  // namespace tl
