// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the evaluator (issue 19): the input is read as Lisp text and its forms are
// evaluated under a step limit and a memory limit, so no input can hang or exhaust memory.
// Lisp errors are expected; a crash, hang, leak, sanitizer report or internal error is a bug.
//
// The fuzzed code runs in a sandbox: builtins with effects outside the interpreter (files, the
// process, standard input) or that would lift the limits signal an error instead, and so do the
// tensor builtins (they allocate device memory outside the heap's limit and compile kernels;
// the loader targets and the op fuzzer cover them). The interpreter is shared by all inputs,
// so one input's definitions are visible to the next, as in a long REPL session.
#include "fuzz_common.h"

#include <cstring>
#include <set>
#include <string>
#include <string_view>

#include "eval/interp.h"

namespace {

using tl::eval::Interp;

// Small enough that an input running into either limit takes well under a second with the
// sanitizers (filling 256 MiB took 12 s, past libFuzzer's -timeout), so fuzzing stays fast.
constexpr std::int64_t kSteps = 200'000;  // closure calls, iterations, list elements
constexpr std::size_t kMemory = std::size_t{32} << 20;

const std::set<std::string> kEffects = {
    "load", "require", "read-file", "write-file", "probe-file", "delete-file", "read-line", "exit",
    "set-memory-limit"};

// Whether the builtin `native` may run in the sandbox: those of the evaluator's own files,
// less the ones with outside effects.
bool allowed(const tl::eval::Native* native) {
  if (kEffects.count(native->name)) return false;
  return native->file != nullptr && std::strstr(native->file, "src/eval/") != nullptr;
}

tl::Interpreter& sandbox() {
  static tl::Interpreter* lisp = [] {
    auto* l = &tl::fuzz::interpreter();
    l->set_output([](std::string_view) {});
    std::vector<std::string> disabled;
    l->internal().for_each_symbol([&](tl::eval::Symbol* s) {
      if (s->bound && tl::eval::is_kind(s->value, tl::eval::ObjKind::Native) &&
          !allowed(tl::eval::as_native(s->value))) {
        disabled.push_back(s->name);
      }
    });
    for (const std::string& name : disabled) {
      l->define(name, [name](tl::Interpreter&, std::span<const tl::Value>) -> tl::Value {
        throw tl::Error(tl::ErrorKind::User, "eval", "program-error", name + ": not available while fuzzing");
      });
    }
    return l;
  }();
  return *lisp;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tl::Interpreter& lisp = sandbox();
  tl::fuzz::InputScope scope;
  Interp& in = lisp.internal();
  in.steps_left = kSteps;
  in.set_memory_limit(kMemory);
  try {
    lisp.eval(std::string_view(reinterpret_cast<const char*>(data), size), "<fuzz>");
  } catch (const tl::Error& e) {
    if (e.kind() == tl::ErrorKind::Internal) __builtin_trap();
  }
  in.steps_left = INT64_MAX;
  return 0;
}
