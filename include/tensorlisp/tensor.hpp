// SPDX-License-Identifier: Apache-2.0
// Tensors in the embedding API: hand host arrays to Lisp and read results back.
//
//   tl::Interpreter lisp;
//   std::vector<float> x{1, 2, 3, 4, 5, 6};
//   tl::Tensor t(lisp, std::span<const float>(x), {2, 3});
//   tl::Tensor y(lisp.call("softmax", {t, tl::Value::keyword("axis"), tl::Value(1)}));
//   std::vector<float> out = y.to_vector<float>();   // 6 values, row-major
//
// Included by <tensorlisp/tensorlisp.hpp>.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tensorlisp/tensorlisp.hpp"

namespace tl {

// Element types, as Lisp names them: 'f32, 'f64, 'f16, 'bf16, 'i8, 'i16, 'i32, 'i64, 'u8,
// 'u32, 'bool. f16 and bf16 elements are IEEE half and bfloat16 bit patterns (uint16_t).
enum class DType { F32, F64, F16, BF16, I8, I16, I32, I64, U8, U32, Bool };

const char* dtype_name(DType t);   // "f32", ...
std::size_t dtype_size(DType t);   // bytes per element (bool: 1)

// The dtype whose elements are C++ type T (f16/bf16 have none: use the byte constructor).
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::F32; }
template <> constexpr DType dtype_of<double>() { return DType::F64; }
template <> constexpr DType dtype_of<std::int8_t>() { return DType::I8; }
template <> constexpr DType dtype_of<std::int16_t>() { return DType::I16; }
template <> constexpr DType dtype_of<std::int32_t>() { return DType::I32; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::I64; }
template <> constexpr DType dtype_of<std::uint8_t>() { return DType::U8; }
template <> constexpr DType dtype_of<std::uint32_t>() { return DType::U32; }
template <> constexpr DType dtype_of<bool>() { return DType::Bool; }

// A tensor held by the host: a tl::Value that is known to be a tensor. It converts to Value
// implicitly, so it can be passed wherever a Value goes (Interpreter::call, lists, globals).
// Tensors are lazy: reading shape and dtype is free, reading elements computes them.
class Tensor {
 public:
  // Copies row-major host data into a new tensor of `lisp`. `bytes` must equal the element
  // count of `shape` times dtype_size(dtype); every extent must be >= 0. Throws tl::Error
  // (value-error) otherwise.
  Tensor(Interpreter& lisp, const void* data, std::size_t bytes, const std::vector<std::int64_t>& shape,
         DType dtype);
  // The same with the dtype taken from the element type.
  template <class T>
  Tensor(Interpreter& lisp, std::span<const T> data, const std::vector<std::int64_t>& shape)
      : Tensor(lisp, data.data(), data.size_bytes(), shape, dtype_of<T>()) {}
  template <class T>
  Tensor(Interpreter& lisp, const std::vector<T>& data, const std::vector<std::int64_t>& shape)
      : Tensor(lisp, std::span<const T>(data), shape) {}
  // A tensor over host memory, without a copy: `data` holds the row-major elements, aligned to
  // the element size, and must stay valid while `keep` lives; the tensor keeps `keep` until its
  // last use. The tensor reads the memory when it is computed; TensorLisp never writes into it
  // (an in-place update copies it first). Bool data is copied (its bytes normalized to 0/1).
  Tensor(Interpreter& lisp, const void* data, std::size_t bytes, const std::vector<std::int64_t>& shape, DType dtype,
         std::shared_ptr<const void> keep);
  // A tensor that Lisp returned. Throws tl::Error (type-error) when `v` is not a tensor.
  explicit Tensor(const Value& v);

  const Value& value() const { return value_; }
  operator const Value&() const { return value_; }  // NOLINT: a tensor is a value

  DType dtype() const;
  int ndim() const;
  // The extents. Throws tl::Error (shape-error) for a symbolic extent (e.g. a batch
  // variable) until the tensor is realized with a binding for it.
  std::vector<std::int64_t> shape() const;
  std::int64_t numel() const;
  // The shape as Lisp prints it, e.g. "(batch 784)".
  std::string shape_string() const;

  // Computes the tensor now (a no-op when it already is), with values for the variables of
  // a symbolic shape. Throws tl::Error on failure; the tensor stays usable.
  void realize(const std::map<std::string, std::int64_t>& bindings = {});
  // Realizes the tensor and copies its elements, row-major, to `dst`. `bytes` must equal
  // numel() * dtype_size(dtype()).
  void copy_to(void* dst, std::size_t bytes) const;
  // Realizes the tensor and returns its row-major elements, numel() * dtype_size(dtype())
  // bytes, read-only: valid while the tensor's value lives and is not assigned to.
  const void* data() const;
  // The same pointer, held: the memory stays valid and unchanged for as long as the returned
  // pointer lives, even past the interpreter (an assign to the tensor afterwards gives the
  // tensor new memory, and the pointer keeps reading the old values).
  std::shared_ptr<const void> pinned_data() const;
  // Realizes the tensor and returns its elements; T must match dtype() exactly (no silent
  // conversion; use (cast x 'f32) in Lisp first). Throws tl::Error (dtype-error) otherwise.
  template <class T>
  std::vector<T> to_vector() const {
    check_element_type(dtype_of<T>());
    std::vector<T> out(static_cast<std::size_t>(numel()));
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<std::uint8_t> bytes(out.size());
      copy_to(bytes.data(), bytes.size());
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != 0;
    } else {
      copy_to(out.data(), out.size() * sizeof(T));
    }
    return out;
  }

 private:
  void check_element_type(DType want) const;
  Value value_;
};

}  // namespace tl
