// SPDX-License-Identifier: Apache-2.0
// Tracing a function of tensors (capture.cpp): what (jit f) replays, and what tlisp compile
// compiles ahead of time (aot.cpp).
#pragma once

#include <memory>
#include <unordered_map>
#include <vector>

#include "bindings/tensor_value.h"
#include "eval/interp.h"
#include "runtime/capture.h"

namespace tl::api {

struct Traced {
  eval::Value result;                                           // f's result, left on the interpreter's stack
  std::vector<tensor::TensorObj*> outs;                         // its tensors, in order
  std::unordered_map<const tensor::Node*, std::size_t> arg_of;  // the fresh argument nodes
  std::uint64_t draws = 0;                                      // random keys drawn
  // Why the trace cannot be replayed (reading data into Lisp, ...), or null when it can: then
  // the capture and where each output and guard flag comes from.
  const char* uncaptured = nullptr;
  std::shared_ptr<runtime::Capture> capture;
  struct Output {
    runtime::Capture::Slot slot;
    tensor::Shape shape;
    tensor::Bindings bindings;
    bool complex = false;  // a complex tensor's parts (tensor_value.h)
  };
  std::vector<Output> outputs;
  struct Guard {
    runtime::Capture::Slot flag;
    std::string type, message;
  };
  std::vector<Guard> guards;  // checks f made (%guard), true when the flag's first byte is not 0
};

// Calls FN on the list ARGS with the JIT device recording every plan it runs. TENSORS are the
// tensors in ARGS (searched through lists, in order), each given to FN on a fresh node (tagged
// with OWNER's address); DIM_ARGS the (dim NAME VALUE) arguments. Push-based: the caller
// holds an Interp::StackMark.
Traced trace_function(eval::Interp& in, eval::Value fn, const void* owner,
                      const std::shared_ptr<runtime::JitDevice>& jit, eval::Value args,
                      const std::vector<tensor::TensorObj*>& tensors, const std::vector<tensor::BoundDim*>& dim_args);

}  // namespace tl::api
