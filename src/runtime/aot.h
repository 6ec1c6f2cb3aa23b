// SPDX-License-Identifier: Apache-2.0
// Ahead-of-time compilation (tlisp compile): a traced function (a Capture: the plans it ran
// and where their leaves came from) becomes a Program (codegen/program.h), the kernels and a
// driver in one object file, and a C header declaring its entry point, the shapes of its
// tensors and the bytes of workspace it needs. The Lisp side (api/aot.cpp) traces.
//
// Buffers: the arguments and results are the entry's parameters; captured data (weights,
// constants) becomes data in the object, or parameters after the inputs when the request
// says so (then written to a weights file, the header giving each one's offset); everything
// computed in between lives in the workspace, laid out once from each plan's buffer plan.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/program.h"
#include "runtime/capture.h"

namespace tl::runtime {

struct AotTensor {
  std::string name;  // a C identifier
  tensor::DType dtype = tensor::DType::F32;
  std::vector<std::int64_t> shape;
};

struct AotRequest {
  std::string name;    // the entry point's C name
  std::string origin;  // what it was made from, for the header's first comment
  std::vector<AotTensor> inputs;
  std::vector<AotTensor> outputs;                             // their shapes and dtypes
  std::vector<Capture::Slot> output_slots;                    // where each comes from
  std::vector<std::pair<Capture::Slot, std::string>> checks;  // guard flags and their messages
  bool weights_as_params = false;
  // The data of buffers the trace wrote in place (JitDevice::before_write), as it was before:
  // what the program starts from.
  std::unordered_map<const tensor::Buffer*, std::string> before;
};

struct AotProgram {
  codegen::Program program;
  std::string header;   // NAME.h
  std::string weights;  // the weights file's bytes (weights as parameters), else empty
  std::vector<AotTensor> weights_info;
  std::size_t kernel_calls = 0;
};

// The program of CAPTURE, traced on DEVICE. A compile-error (ConditionError) says what it
// cannot compile: random numbers drawn inside, external kernels, sizes left symbolic.
AotProgram make_aot_program(const JitDevice& device, const Capture& capture, const AotRequest& request);

// The C type of DTYPE's elements ("float", "uint16_t" for f16 bits, ...).
const char* c_type(tensor::DType dtype);

}  // namespace tl::runtime
