// SPDX-License-Identifier: Apache-2.0
// Ahead-of-time programs from traces (aot.h).
#include "runtime/aot.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <tuple>
#include <unordered_map>

#include "support/condition_error.h"

namespace tl::runtime {

using codegen::Program;
using codegen::ProgramRef;
using tensor::Buffer;
using tensor::DType;

const char* c_type(DType dtype) {
  switch (dtype) {
    case DType::Bool: return "uint8_t";
    case DType::U8: return "uint8_t";
    case DType::I8: return "int8_t";
    case DType::I16: return "int16_t";
    case DType::U32: return "uint32_t";
    case DType::I32: return "int32_t";
    case DType::I64: return "int64_t";
    case DType::F16: return "uint16_t";
    case DType::BF16: return "uint16_t";
    case DType::F32: return "float";
    case DType::F64: return "double";
    case DType::Q8_0:
    case DType::Q4_0: return "uint8_t";  // blocks of bytes
    case DType::C64:
    case DType::C128: break;  // never a node's dtype (tensor_value.h)
  }
  return "uint8_t";
}

namespace {

constexpr std::int64_t kAlign = 64;  // workspace buffers start on cache lines

[[noreturn]] void refuse(const AotRequest& r, const std::string& why) {
  throw ConditionError("program-error", "compile: " + r.name + ": " + why);
}

std::int64_t elements_of(const std::vector<std::int64_t>& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) n *= d;
  return n;
}

class Builder {
 public:
  Builder(const JitDevice& device, const Capture& capture, const AotRequest& request)
      : device_(device), capture_(capture), r_(request) {}

  AotProgram build() {
    for (const auto* list : {&r_.inputs, &r_.outputs}) {
      for (const AotTensor& t : *list) {
        if (tensor::is_quantized(t.dtype)) {
          refuse(r_, "its " + std::string(list == &r_.inputs ? "input " : "output ") + t.name + " is a " +
                         std::string(tensor::dtype_name(t.dtype)) +
                         " tensor: a compiled program's arguments and results are element arrays (quantized weights "
                         "inside the program are fine)");
        }
      }
    }
    Program& p = out_.program;
    p.name = r_.name;
    params_written_.assign(r_.inputs.size(), false);
    for (std::size_t s = 0; s < capture_.steps().size(); ++s) {
      plan_direct_outputs(s);
      step(s);
    }
    for (const auto& [flag, message] : r_.checks) {
      Program::Op op;
      op.kind = Program::Op::Check;
      op.src = resolve(flag);
      p.errors.push_back(message);
      op.code = static_cast<int>(p.errors.size());
      p.ops.push_back(op);
    }
    outputs();
    p.params = static_cast<int>(r_.inputs.size() + weight_params_.size() + r_.outputs.size());
    // Weights as parameters sit between the inputs and the outputs: renumber the outputs'.
    for (Program::Op& op : p.ops) {
      for (ProgramRef* ref : {&op.dst, &op.src}) shift_output(*ref);
      for (ProgramRef& ref : op.buffers) shift_output(ref);
    }
    p.workspace_bytes = workspace_;
    out_.header = header();
    return std::move(out_);
  }

 private:
  // Outputs are numbered from kOutputBase while weights are still being found.
  static constexpr int kOutputBase = 1 << 20;
  void shift_output(ProgramRef& ref) const {
    if (ref.kind == ProgramRef::Param && ref.index >= kOutputBase) {
      ref.index = ref.index - kOutputBase + static_cast<int>(r_.inputs.size() + weight_params_.size());
    }
  }

  // Captured data: a global of the program, or a weight parameter.
  ProgramRef data(const std::shared_ptr<Buffer>& b) {
    auto it = data_of_.find(b.get());
    if (it == data_of_.end()) {
      auto old = r_.before.find(b.get());
      const char* bytes = old != r_.before.end() ? old->second.data() : static_cast<const char*>(b->data());
      if (r_.weights_as_params) {
        if (tensor::is_quantized(b->dtype)) {
          refuse(r_, "a " + std::string(tensor::dtype_name(b->dtype)) +
                         " weight cannot be a weight parameter (its blocks are no element array): compile without "
                         "weights as parameters, or dequantize it");
        }
        const int index = static_cast<int>(weight_params_.size());
        weight_params_.push_back(b);
        AotTensor t{"w" + std::to_string(index), b->dtype, {static_cast<std::int64_t>(b->count())}};
        out_.weights_info.push_back(t);
        while (out_.weights.size() % kAlign != 0) out_.weights.push_back('\0');
        weight_offsets_.push_back(static_cast<std::int64_t>(out_.weights.size()));
        out_.weights.append(bytes, b->size_bytes());
        it = data_of_.emplace(b.get(), ProgramRef{ProgramRef::Param, static_cast<int>(r_.inputs.size()) + index, 0})
                 .first;
      } else {
        out_.program.data.push_back(Program::Data{std::string(bytes, b->size_bytes()), false});
        it = data_of_.emplace(b.get(), ProgramRef{ProgramRef::Data, static_cast<int>(out_.program.data.size()) - 1, 0})
                 .first;
      }
    }
    return it->second;
  }

  void mark_written(const ProgramRef& ref) {
    if (ref.kind == ProgramRef::Data) out_.program.data[static_cast<std::size_t>(ref.index)].writable = true;
    if (ref.kind == ProgramRef::Param && ref.index < static_cast<int>(r_.inputs.size())) {
      params_written_[static_cast<std::size_t>(ref.index)] = true;
    }
    if (ref.kind == ProgramRef::Param && ref.index >= static_cast<int>(r_.inputs.size()) && ref.index < kOutputBase) {
      weights_written_ = true;
    }
  }

  ProgramRef resolve(const Capture::Slot& s) {
    switch (s.kind) {
      case Capture::Slot::Arg: return ProgramRef{ProgramRef::Param, static_cast<int>(s.index), 0};
      case Capture::Slot::Step: return results_.at(s.index).at(s.output);
      case Capture::Slot::Rng:
        refuse(r_,
               "it draws random numbers (rand, randn, dropout in training mode) while traced; a compiled program has "
               "no random generator: draw them outside and pass them as arguments");
      case Capture::Slot::Data: return data(s.data);
    }
    refuse(r_, "a buffer of unknown origin");
  }

  // Step S: its leaves, workspace slots and kernels, in the order execute runs them.
  void step(std::size_t s) {
    const Capture::Step& st = capture_.steps()[s];
    const JitDevice::Plan& plan = *st.plan;
    const tensor::Bindings& b = st.bindings;
    std::unordered_map<int, ProgramRef> values;
    std::unordered_map<int, std::int64_t> bytes;  // of the values kernels compute
    for (std::size_t i = 0; i < plan.leaves.size(); ++i) values[plan.leaves[i]] = resolve(st.leaves[i]);
    for (const auto& [pos, buffer] : plan.constants) values[pos] = data(buffer);
    // Each slot of the buffer plan gets workspace when a kernel first computes into it.
    std::vector<std::int64_t> slot_offset(plan.buffers.slots.size(), -1);
    auto slot_ref = [&](int slot) {
      std::int64_t& offset = slot_offset.at(static_cast<std::size_t>(slot));
      if (offset < 0) {
        const BufferPlan::Slot& sl = plan.buffers.slots[static_cast<std::size_t>(slot)];
        offset = allocate(sl.elements.eval(b) * static_cast<std::int64_t>(tensor::dtype_size(sl.dtype)));
      }
      return ProgramRef{ProgramRef::Workspace, 0, offset};
    };
    std::vector<std::tuple<ProgramRef, ProgramRef, int>> writes;  // an assign's target, its value, its node
    for (std::size_t i = 0; i < plan.kernels.size(); ++i) {
      const JitDevice::PlanKernel& k = plan.kernels[i];
      const JitDevice::Chosen code = device_.chosen(k, b);
      if (!code.compiled->kernel) {
        const std::string& entry = code.compiled->entry;  // "extern NAME"
        refuse(r_, "it runs the external kernel " + entry.substr(entry.find(' ') + 1) +
                       " (a backend's own code, such as BLAS sgemm); compiled programs contain generated kernels only: "
                       "turn its optimizer rule off, e.g. (optimizer-disable 'blas)");
      }
      std::int64_t elements = 1;
      for (const auto& d : k.shape) elements *= d.eval(b);
      bytes[k.node] = elements * static_cast<std::int64_t>(tensor::dtype_size(k.dtype));
      ProgramRef out;
      if (k.write_into >= 0) {
        out = values.at(k.write_into);
        mark_written(out);
      } else if (auto direct = direct_outputs_.find({s, k.node}); direct != direct_outputs_.end()) {
        out = direct->second;
      } else if (k.assign_target >= 0) {
        // An assign's value is copied into its target after the step's last kernel: its
        // buffer must live that long, so it takes no slot another output shares.
        out = ProgramRef{ProgramRef::Workspace, 0, allocate(bytes[k.node])};
      } else {
        out = slot_ref(plan.buffers.slot.at(i));
      }
      Program::Op op;
      op.kind = Program::Op::Call;
      op.kernel = kernel_index(code.compiled->kernel);
      op.buffers.assign(k.buffer_count, ProgramRef{});
      op.buffers[0] = out;
      for (std::size_t j = 0; j < k.inputs.size(); ++j) {
        op.buffers.at(static_cast<std::size_t>(k.input_slots[j])) = values.at(k.inputs[j]);
      }
      for (const std::string& var : code.compiled->kernel->vars) op.vars.push_back(b.at(var));
      op.count = code.count;
      out_.program.ops.push_back(std::move(op));
      ++out_.kernel_calls;
      if (!k.in_place() && k.assign_target >= 0) writes.emplace_back(values.at(k.assign_target), out, k.node);
      values[k.node] = out;
    }
    for (const auto& [target, value, node] : writes) {
      Program::Op op;
      op.kind = Program::Op::Copy;
      op.dst = target;
      op.src = value;
      op.bytes = bytes.at(node);
      mark_written(target);
      out_.program.ops.push_back(op);
      values[node] = target;
    }
    std::vector<ProgramRef> results;
    for (int pos : plan.results) results.push_back(values.at(pos));
    results_.push_back(std::move(results));
  }

  // Outputs a kernel of step S computes as its fresh result are written by it straight into
  // the output parameter (the rest are copied there at the end). Decided before S is built.
  void plan_direct_outputs(std::size_t s) {
    const JitDevice::Plan& plan = *capture_.steps()[s].plan;
    for (std::size_t o = 0; o < r_.output_slots.size(); ++o) {
      const Capture::Slot& slot = r_.output_slots[o];
      if (slot.kind != Capture::Slot::Step || slot.index != s) continue;
      const int pos = plan.results.at(slot.output);
      bool fresh = false, written_later = false;
      for (const JitDevice::PlanKernel& k : plan.kernels) {
        if (k.node == pos) fresh = k.write_into < 0 && k.assign_target < 0;
        written_later = written_later || k.write_into == pos || k.assign_target == pos;
      }
      if (!fresh || written_later || direct_outputs_.count({s, pos}) != 0) continue;
      direct_outputs_[{s, pos}] = ProgramRef{ProgramRef::Param, kOutputBase + static_cast<int>(o), 0};
      direct_.push_back(o);
    }
  }

  void outputs() {
    for (std::size_t o = 0; o < r_.outputs.size(); ++o) {
      if (std::find(direct_.begin(), direct_.end(), o) != direct_.end()) continue;
      Program::Op op;
      op.kind = Program::Op::Copy;
      op.dst = ProgramRef{ProgramRef::Param, kOutputBase + static_cast<int>(o), 0};
      op.src = resolve(r_.output_slots[o]);
      op.bytes = elements_of(r_.outputs[o].shape) * static_cast<std::int64_t>(tensor::dtype_size(r_.outputs[o].dtype));
      out_.program.ops.push_back(op);
    }
  }

  // BYTES more of workspace, on a cache line: their offset.
  std::int64_t allocate(std::int64_t bytes) {
    const std::int64_t at = workspace_;
    workspace_ += (bytes + kAlign - 1) / kAlign * kAlign;
    return at;
  }

  int kernel_index(const std::shared_ptr<const codegen::Kernel>& k) {
    auto [it, added] = kernel_of_.emplace(k.get(), static_cast<int>(out_.program.kernels.size()));
    if (added) out_.program.kernels.push_back(k);
    return it->second;
  }

  std::string header() const;

  const JitDevice& device_;
  const Capture& capture_;
  const AotRequest& r_;
  AotProgram out_;
  std::int64_t workspace_ = 0;
  std::vector<std::vector<ProgramRef>> results_;  // each step's results
  std::unordered_map<const Buffer*, ProgramRef> data_of_;
  std::vector<std::shared_ptr<Buffer>> weight_params_;
  std::vector<std::int64_t> weight_offsets_;
  std::unordered_map<const codegen::Kernel*, int> kernel_of_;
  std::map<std::pair<std::size_t, int>, ProgramRef> direct_outputs_;  // (step, position)
  std::vector<std::size_t> direct_;                                   // outputs written directly
  std::vector<bool> params_written_;                                  // inputs a kernel writes
  bool weights_written_ = false;
};

std::string upper(const std::string& s) {
  std::string out = s;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string shape_text(const std::vector<std::int64_t>& shape, const char* sep) {
  std::string out;
  for (std::size_t i = 0; i < shape.size(); ++i) out += (i ? sep : "") + std::to_string(shape[i]);
  return out;
}

std::string Builder::header() const {
  const std::string& n = r_.name;
  const std::string N = upper(n);
  std::string h;
  h += "/* " + n + ".h: generated by `tlisp compile` from " + r_.origin + ". Do not edit.\n";
  h += " *\n";
  h += " * Link " + n + ".o into a C or C++ program (it needs only the C library and libm):\n";
  h += " *   cc main.c " + n + ".o -lm\n";
  h += " * " + n + "() runs the function's " + std::to_string(out_.kernel_calls) +
       " kernel calls in order on the calling thread. Arrays are dense,\n";
  h += " * row-major, aligned to their element type and must not overlap; WORKSPACE is " + N + "_WORKSPACE_BYTES\n";
  h += " * bytes (64-byte aligned is best) or NULL, when it allocates them itself. It returns 0, or an\n";
  h += " * error code whose message " + n + "_error(code) gives. Calls on different workspaces may run at once\n";
  h += " * on different threads" +
       std::string(weights_written_ || std::any_of(out_.program.data.begin(), out_.program.data.end(),
                                                   [](const Program::Data& d) { return d.writable; })
                       ? ", except that the function updates its weights in place: one call at a time.\n"
                       : ".\n");
  h += " */\n";
  h += "#ifndef " + N + "_H\n#define " + N + "_H\n\n#include <stddef.h>\n#include <stdint.h>\n\n";
  h += "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n";
  h += "#define " + N + "_WORKSPACE_BYTES " + std::to_string(workspace_) + "\n";
  auto describe = [&](const char* kind, std::size_t i, const AotTensor& t) {
    const std::string P = N + "_" + kind + std::to_string(i);
    h += "\n/* " +
         std::string(kind == std::string("IN")    ? "input "
                     : kind == std::string("OUT") ? "output "
                                                  : "weight ") +
         std::to_string(i) + ", " + t.name + ": " + std::string(tensor::dtype_name(t.dtype)) + " [" +
         shape_text(t.shape, " ") + "] */\n";
    h += "#define " + P + "_ELEMENTS " + std::to_string(elements_of(t.shape)) + "\n";
    h += "#define " + P + "_RANK " + std::to_string(t.shape.size()) + "\n";
    if (!t.shape.empty()) h += "#define " + P + "_SHAPE {" + shape_text(t.shape, ", ") + "}\n";
  };
  for (std::size_t i = 0; i < r_.inputs.size(); ++i) describe("IN", i, r_.inputs[i]);
  for (std::size_t i = 0; i < out_.weights_info.size(); ++i) {
    describe("WEIGHT", i, out_.weights_info[i]);
    h += "#define " + N + "_WEIGHT" + std::to_string(i) + "_OFFSET " + std::to_string(weight_offsets_[i]) + " /* in " +
         n + ".weights */\n";
  }
  for (std::size_t i = 0; i < r_.outputs.size(); ++i) describe("OUT", i, r_.outputs[i]);
  if (!out_.weights_info.empty()) {
    h += "\n/* The weights file " + n + ".weights holds each weight at its offset (native byte order). */\n";
    h += "#define " + N + "_WEIGHTS_BYTES " + std::to_string(out_.weights.size()) + "\n";
  }
  h += "\nint " + n + "(";
  std::vector<std::string> params;
  for (std::size_t i = 0; i < r_.inputs.size(); ++i) {
    params.push_back(std::string(params_written_[i] ? "" : "const ") + c_type(r_.inputs[i].dtype) + "* " +
                     r_.inputs[i].name);
  }
  for (std::size_t i = 0; i < out_.weights_info.size(); ++i) {
    params.push_back(std::string(weights_written_ ? "" : "const ") + c_type(out_.weights_info[i].dtype) + "* " +
                     out_.weights_info[i].name);
  }
  for (const AotTensor& t : r_.outputs) params.push_back(std::string(c_type(t.dtype)) + "* " + t.name);
  params.push_back("void* workspace");
  for (std::size_t i = 0; i < params.size(); ++i) h += (i ? ", " : "") + params[i];
  h += ");\n";
  h += "const char* " + n + "_error(int code);\n";
  h += "\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* " + N + "_H */\n";
  return h;
}

}  // namespace

AotProgram make_aot_program(const JitDevice& device, const Capture& capture, const AotRequest& request) {
  Builder b(device, capture, request);
  return b.build();
}

}  // namespace tl::runtime
