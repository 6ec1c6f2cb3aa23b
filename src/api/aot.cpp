// SPDX-License-Identifier: Apache-2.0
// tlisp compile, the Lisp side's builtin: traces a function on example arguments (as (jit f)
// does) and writes the program runtime/aot.h makes of it as an object file and a C header
// (and a weights file when the weights are parameters). stdlib/aot.lisp is the interface.
#include "runtime/aot.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "api/devices.h"
#include "api/trace.h"
#include "eval/builtins.h"

namespace tl::api {

using eval::Interp;
using eval::Value;
using Args = Value*;
using N = std::uint32_t;

namespace {

void collect_tensors(Interp& in, Value v, std::vector<tensor::TensorObj*>& out) {
  for (; eval::is_cons(v); v = eval::cdr(v)) collect_tensors(in, eval::car(v), out);
  if (tensor::is_tensor(v)) {
    tensor::TensorObj* t = tensor::as_tensor(v);
    if (t->complex) tensor::refuse_complex(in, "compile", tensor::value_dtype(t));
    tensor::realize(in, t);
    out.push_back(t);
  }
}

// C and C++ keywords, which a parameter may not be called (an argument named `float`).
bool c_keyword(const std::string& s) {
  static const char* const kWords[] = {"auto",     "bool",     "break",    "case",     "char",    "class",     "const",
                                       "continue", "default",  "delete",   "do",       "double",  "else",      "enum",
                                       "extern",   "false",    "float",    "for",      "goto",    "if",        "inline",
                                       "int",      "long",     "new",      "operator", "private", "protected", "public",
                                       "register", "restrict", "return",   "short",    "signed",  "sizeof",    "static",
                                       "struct",   "switch",   "template", "this",     "throw",   "true",      "try",
                                       "typedef",  "typename", "union",    "unsigned", "using",   "virtual",   "void",
                                       "volatile", "while",    "workspace"};
  for (const char* w : kWords) {
    if (s == w) return true;
  }
  return false;
}

bool c_identifier(const std::string& s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

void write_file(Interp& in, const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f) in.error("file-error", "compile: cannot write \"" + path + "\"");
}

Value compile_function(Interp& in, Args a) {
  Interp::StackMark mark(in);
  Value fn = eval::arg_function(in, "compile", a, 0);
  const Value args = eval::arg_list(in, "compile", a, 1);
  const std::string name = eval::arg_string(in, "compile", a, 2)->text;
  const std::string prefix = eval::arg_string(in, "compile", a, 3)->text;
  const bool weights_as_params = !a[4].is_nil();
  const std::string cpu = eval::arg_string(in, "compile", a, 5)->text;
  const std::string origin = eval::arg_string(in, "compile", a, 6)->text;
  const Value arg_names = eval::arg_list(in, "compile", a, 7);
  if (!c_identifier(name) || c_keyword(name)) {
    in.error("value-error", "compile: the name \"" + name + "\" is not a C identifier (or is a keyword)");
  }
  std::shared_ptr<runtime::JitDevice> jit = current_jit(in);
  if (!jit || jit->gpu() || !jit->backend().host_memory()) {
    in.error("device-error",
             "compile: compiled programs are for the CPU; trace on the cpu device ((use-backend 'cpu)), not " +
                 (jit ? jit->backend().name() : std::string("the reference executor")));
  }
  std::vector<tensor::TensorObj*> tensors;
  collect_tensors(in, args, tensors);
  for (Value v = args; eval::is_cons(v); v = eval::cdr(v)) {
    Value x = eval::car(v);
    if (!tensor::is_tensor(x)) {
      in.error("type-error",
               "compile: the example arguments must be tensors (their shapes and dtypes are the program's), got " +
                   in.repr(x));
    }
  }
  // The data the trace writes in place (an assign to a weight), as it was before: what the
  // program starts from.
  std::unordered_map<const tensor::Buffer*, std::string> before;
  struct Restore {
    runtime::JitDevice& jit;
    ~Restore() { jit.before_write = nullptr; }
  } restore{*jit};
  jit->before_write = [&](tensor::Buffer& b) {
    if (before.count(&b) != 0) return;
    before.emplace(&b, std::string(static_cast<const char*>(b.data()), b.size_bytes()));
  };
  Traced tr = trace_function(in, fn, &tr, jit, args, tensors, {});
  jit->before_write = nullptr;
  if (tr.uncaptured != nullptr) {
    in.error("program-error",
             "compile: " + name + ": it " + tr.uncaptured + " while traced; a compiled program cannot");
  }
  runtime::AotRequest req;
  req.name = name;
  req.origin = origin;
  req.weights_as_params = weights_as_params;
  req.before = std::move(before);
  std::size_t i = 0;
  for (Value v = arg_names; eval::is_cons(v) && i < tensors.size(); v = eval::cdr(v), ++i) {
    const std::string n = eval::is_string(eval::car(v)) ? eval::as_string(eval::car(v))->text : "";
    const tensor::Node* node = tensors[i]->node.get();
    // A name that could clash in C (a keyword, the workspace, an output's outN) becomes inN.
    const bool usable = c_identifier(n) && !c_keyword(n) &&
                        !(n.size() > 3 && n.starts_with("out") && std::isdigit(static_cast<unsigned char>(n[3])));
    req.inputs.push_back(
        {usable ? n : "in" + std::to_string(i), node->dtype, tensor::eval_shape(node->shape, node->bindings)});
  }
  for (; i < tensors.size(); ++i) {
    const tensor::Node* node = tensors[i]->node.get();
    req.inputs.push_back({"in" + std::to_string(i), node->dtype, tensor::eval_shape(node->shape, node->bindings)});
  }
  for (std::size_t o = 0; o < tr.outputs.size(); ++o) {
    const Traced::Output& out = tr.outputs[o];
    req.outputs.push_back(
        {"out" + std::to_string(o), tr.outs[o]->node->dtype, tensor::eval_shape(out.shape, out.bindings)});
    req.output_slots.push_back(out.slot);
  }
  if (req.outputs.empty()) in.error("value-error", "compile: " + in.repr(fn) + " returns no tensor");
  for (const Traced::Guard& g : tr.guards) req.checks.emplace_back(g.flag, g.type + ": " + g.message);
  runtime::AotProgram p = runtime::make_aot_program(*jit, *tr.capture, req);
  std::string object;
  try {
    object = codegen::compile_program(p.program, codegen::ProgramTarget{cpu});
  } catch (const std::runtime_error& e) {
    in.error("value-error", std::string("compile: ") + e.what());
  }
  const std::filesystem::path dir = std::filesystem::path(prefix).parent_path();
  std::error_code ec;
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  write_file(in, prefix + ".o", object);
  write_file(in, prefix + ".h", p.header);
  if (weights_as_params) write_file(in, prefix + ".weights", p.weights);
  // A plist; its strings are rooted on the stack while the list is made.
  Value obj = in.make_string(prefix + ".o");
  in.push(obj);
  Value header = in.make_string(prefix + ".h");
  in.push(header);
  Value weights = weights_as_params ? in.make_string(prefix + ".weights") : eval::nil();
  in.push(weights);
  auto key = [&](const char* k) { return Value::object(in.keyword(k)); };
  return in.list({key("object"), obj, key("header"), header, key("weights"), weights, key("kernels"),
                  Value::integer(static_cast<std::int64_t>(p.kernel_calls)), key("workspace-bytes"),
                  Value::integer(p.program.workspace_bytes)});
}

}  // namespace

void register_aot_builtins(Interp& in) {
  TL_BUILTIN(in, "%compile-function", 8, 8,
             "(%compile-function FN ARGS NAME PREFIX WEIGHTS-AS-PARAMS CPU ORIGIN ARG-NAMES)",
             "Traces FN on the tensors ARGS and writes PREFIX.o and PREFIX.h (and PREFIX.weights). Use aot:compile.",
             [](Interp& in, Args a, N) -> Value { return compile_function(in, a); });
}

}  // namespace tl::api
