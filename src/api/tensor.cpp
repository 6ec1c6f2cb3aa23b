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

[[noreturn]] void fail(const std::string& type, const std::string& message) {
  throw Error(ErrorKind::User, eval::error_phase(type), type, message);
}

DType to_public(tensor::DType t) {
  for (DType d : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8, DType::I16, DType::I32,
                  DType::I64, DType::U8, DType::U32, DType::Bool}) {
    if (to_internal(d) == t) return d;
  }
  if (tensor::is_quantized(t)) {
    fail("dtype-error",
         "tl::Tensor: a " + std::string(tensor::dtype_name(t)) +
             " tensor's blocks have no element type of the API: dequantize it first, e.g. (cast x 'f32)");
  }
  TL_UNREACHABLE("tl::Tensor: a dtype with no public name");
}

std::string extents_str(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ' ';
    s += std::to_string(shape[i]);
  }
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

namespace {

// The element count of `shape`, checked against `bytes` of `dtype`.
std::size_t checked_count(const std::vector<std::int64_t>& shape, std::size_t bytes, DType dtype) {
  std::size_t count = 1;
  for (std::int64_t d : shape) {
    if (d < 0) fail("value-error", "tl::Tensor: negative extent in shape " + extents_str(shape));
    if (__builtin_mul_overflow(count, static_cast<std::size_t>(d), &count)) {
      fail("value-error", "tl::Tensor: the shape " + extents_str(shape) + " has more than 2^64 elements");
    }
  }
  std::size_t need = 0;
  if (__builtin_mul_overflow(count, dtype_size(dtype), &need)) {
    fail("value-error",
         "tl::Tensor: the shape " + extents_str(shape) + " of " + dtype_name(dtype) + " needs more than 2^64 bytes");
  }
  if (need != bytes) {
    fail("value-error", "tl::Tensor: shape " + extents_str(shape) + " of " + dtype_name(dtype) + " needs " +
                            std::to_string(need) + " bytes, got " + std::to_string(bytes));
  }
  return count;
}

// A tensor value of `lisp` over `buf`.
Value leaf_value(Interpreter& lisp, std::shared_ptr<tensor::Buffer> buf, const std::vector<std::int64_t>& shape) {
  eval::Interp& in = lisp.internal();
  in.heap.account_external(buf->size_bytes());
  tensor::Shape s(shape.begin(), shape.end());
  eval::Interp::StackMark mark(in);
  in.push(tensor::make_tensor(in, tensor::runtime(in).graph.make_buffer(std::move(buf), s)));
  return in.export_host(in.sp[-1]);
}

}  // namespace

Tensor::Tensor(Interpreter& lisp, const void* data, std::size_t bytes, const std::vector<std::int64_t>& shape,
               DType dtype) {
  const std::size_t count = checked_count(shape, bytes, dtype);
  auto buf = std::make_shared<tensor::Buffer>(to_internal(dtype), count);
  if (bytes != 0) std::memcpy(buf->data(), data, bytes);
  if (dtype == DType::Bool) {
    for (auto& b : buf->bytes()) b = b != 0;  // any nonzero byte is true
  }
  value_ = leaf_value(lisp, std::move(buf), shape);
}

Tensor::Tensor(Interpreter& lisp, const void* data, std::size_t bytes, const std::vector<std::int64_t>& shape,
               DType dtype, std::shared_ptr<const void> keep) {
  if (dtype == DType::Bool || bytes == 0) {
    *this = Tensor(lisp, data, bytes, shape, dtype);
    return;
  }
  const std::size_t count = checked_count(shape, bytes, dtype);
  if (data == nullptr || reinterpret_cast<std::uintptr_t>(data) % dtype_size(dtype) != 0) {
    fail("value-error", std::string("tl::Tensor: the data of a ") + dtype_name(dtype) + " tensor at " +
                            (data == nullptr ? "null" : "an address") + " not aligned to " +
                            std::to_string(dtype_size(dtype)) + " bytes");
  }
  // The buffer never writes through the pointer (in-place updates copy outside memory first).
  auto buf = std::make_shared<tensor::Buffer>(to_internal(dtype), count, std::const_pointer_cast<void>(keep),
                                              const_cast<void*>(data));
  value_ = leaf_value(lisp, std::move(buf), shape);
}

namespace {

// The tensor object behind a host value, or a type error.
tensor::TensorObj* tensor_of(const Value& v, const std::shared_ptr<detail::RootCell>& cell) {
  if (!cell || cell->interp == nullptr || !tensor::is_tensor(cell->value)) {
    fail("type-error", "tl::Tensor: expected a tensor, got " + v.type_name() + " " + v.repr());
  }
  tensor::TensorObj* t = tensor::as_tensor(cell->value);
  if (t->complex) {
    fail("dtype-error", "tl::Tensor: complex tensors (" + std::string(tensor::dtype_name(tensor::value_dtype(t))) +
                            ") have no host type here; pass (view-as-real z), a real tensor of their parts");
  }
  return t;
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

const void* Tensor::data() const {
  const_cast<Tensor*>(this)->realize();
  const tensor::Buffer& b = *tensor_of(value_, value_.cell_)->node->buffer;
  return b.size_bytes() == 0 ? nullptr : b.data();
}

std::shared_ptr<const void> Tensor::pinned_data() const {
  const void* p = data();
  struct Pin {
    std::shared_ptr<const tensor::Buffer> buffer;
    ~Pin() {
      if (buffer) buffer->unpin();
    }
  };
  auto pin = std::make_shared<Pin>();
  pin->buffer = tensor_of(value_, value_.cell_)->node->buffer;
  pin->buffer->pin();
  return std::shared_ptr<const void>(pin, p);
}

void Tensor::check_element_type(DType want) const {
  DType have = dtype();
  if (have != want) {
    fail("dtype-error", std::string("tl::Tensor::to_vector: the tensor is ") + dtype_name(have) +
                            ", the element type asked for is " + dtype_name(want));
  }
}

}  // namespace tl
