// SPDX-License-Identifier: Apache-2.0
// The loop-IR interpreter of the passes' tests (loop_interpreter.h).
#include "loop_interpreter.h"

#include <algorithm>
#include <span>
#include <stdexcept>
#include <string>

namespace tl::test {

void LoopInterpreter::run() {
  if (k_.group > 0) throw std::runtime_error("interpreter: thread groups are not supported");
  exec(k_.body);
}

LoopInterpreter::Scalar& LoopInterpreter::at(std::int32_t buffer, std::int64_t index) {
  auto& b = buffers_.at(static_cast<std::size_t>(buffer));
  if (index < 0 || static_cast<std::size_t>(index) >= b.size()) {
    throw std::runtime_error("interpreter: b" + std::to_string(buffer) + "[" + std::to_string(index) +
                             "] is outside its " + std::to_string(b.size()) + " elements");
  }
  return b[static_cast<std::size_t>(index)];
}

LoopInterpreter::Scalar LoopInterpreter::eval(codegen::ExprId id) {
  using codegen::EOp;
  const codegen::Expr x = k_.expr(id);
  switch (x.op) {
    case EOp::Const: return Scalar{x.ival, x.fval};
    case EOp::LoopVar: return Scalar{loops_.at(static_cast<std::size_t>(x.arg)), 0};
    case EOp::SymVar: return Scalar{vars_.at(static_cast<std::size_t>(x.arg)), 0};
    case EOp::Load: {
      const std::int64_t i = eval(x.src[0]).i;
      if (x.ival != 1) return at(x.arg, i);
      // load_bytes: the buffer holds one byte per element; little-endian.
      std::uint64_t word = 0;
      for (std::int64_t b = 0; b < static_cast<std::int64_t>(tensor::dtype_size(x.dtype)); ++b)
        word |= (static_cast<std::uint64_t>(at(x.arg, i + b).i) & 0xff) << (8 * b);
      return Scalar{tensor::wrap_int(static_cast<std::int64_t>(word), x.dtype), 0};
    }
    case EOp::Dot4: {
      const std::int64_t a = eval(x.src[0]).i, b = eval(x.src[1]).i;
      std::int64_t sum = eval(x.src[2]).i;
      auto signed_byte = [](std::int64_t w, int t) {
        return static_cast<std::int64_t>(static_cast<std::int8_t>(static_cast<std::uint8_t>((w >> (8 * t)) & 0xff)));
      };
      for (int t = 0; t < 4; ++t) {
        const std::int64_t byte = (x.arg & codegen::kDot4SignedA) ? signed_byte(a, t) : (a >> (8 * t)) & 0xff;
        // The bound the pass promised (a target may use an instruction that saturates above it).
        if (!(x.arg & codegen::kDot4SignedA) && byte > x.ival) {
          throw std::runtime_error("interpreter: dot4's byte " + std::to_string(byte) + " exceeds its bound " +
                                   std::to_string(x.ival));
        }
        std::int64_t other = signed_byte(b, t);
        if (x.arg & codegen::kDot4ClampB) other = std::max<std::int64_t>(other, -127);
        sum += byte * other;
      }
      return Scalar{tensor::wrap_int(sum, x.dtype), 0};
    }
    case EOp::AccRead: return accs_.at(static_cast<std::size_t>(x.arg));
    case EOp::Min: return Scalar{std::min(eval(x.src[0]).i, eval(x.src[1]).i), 0};
    default: break;
  }
  auto op = codegen::primitive_of(x.op);
  if (!op) throw std::runtime_error(std::string("interpreter: unexpected ") + codegen::eop_name(x.op));
  Scalar args[3];
  int n = 0;
  for (; n < 3 && x.src[n] >= 0; ++n) args[n] = eval(x.src[n]);
  const tensor::DType operand = k_.expr(x.src[n == 3 ? 1 : 0]).dtype;
  return tensor::evaluate(*op, operand, x.dtype, std::span<const Scalar>(args, static_cast<std::size_t>(n)));
}

void LoopInterpreter::exec(const std::vector<codegen::Stmt>& body) {
  using codegen::Stmt;
  for (const Stmt& s : body) {
    switch (s.kind) {
      case Stmt::Kind::Loop: {
        const std::int64_t n = eval(s.extent).i;
        for (std::int64_t i = 0; i < n; ++i) {
          loops_[static_cast<std::size_t>(s.var)] = i;
          exec(s.body);
        }
        break;
      }
      case Stmt::Kind::Store:
        if (s.mask < 0 || eval(s.mask).i != 0) at(s.buffer, eval(s.index).i) = eval(s.value);
        break;
      case Stmt::Kind::AccDef: accs_.at(static_cast<std::size_t>(s.acc)) = eval(s.value); break;
      case Stmt::Kind::AccUpdate: {
        Scalar& acc = accs_.at(static_cast<std::size_t>(s.acc));
        const Scalar args[2] = {acc, eval(s.value)};
        const tensor::Op op = s.reduce == tensor::ReduceKind::Sum   ? tensor::Op::Add
                              : s.reduce == tensor::ReduceKind::Max ? tensor::Op::Max
                                                                    : tensor::Op::Mul;
        acc = tensor::evaluate(op, s.dtype, s.dtype, args);
        break;
      }
      case Stmt::Kind::AccSet: accs_.at(static_cast<std::size_t>(s.acc)) = eval(s.value); break;
      case Stmt::Kind::GroupCombine: throw std::runtime_error("interpreter: thread groups are not supported");
    }
  }
}

}  // namespace tl::test
