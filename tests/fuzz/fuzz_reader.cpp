// SPDX-License-Identifier: Apache-2.0
// Fuzz target for the incremental reader (issue 19): the input is read form by form, each
// form printed and read back, and every prefix of the input is offered to check_complete as a
// REPL would. Read errors are expected; a crash, hang, leak or sanitizer report is a bug, and
// so is a printed form that reads back different (the printer and reader disagree).
#include "fuzz_common.h"

#include <string>
#include <string_view>

#include "eval/interp.h"
#include "reader/reader.h"

namespace {

using tl::eval::Interp;
using tl::eval::Value;
using tl::reader::ReadStatus;
using tl::reader::Reader;

// Reads every form of `text` (registered as a source named `name`), calling `each` on each.
template <class F>
void read_all(Interp& in, const std::string& text, const char* name, F&& each) {
  std::uint32_t file = in.sources.add(name, text);
  Reader reader(in, file, text);
  try {
    for (;;) {
      Value form;
      tl::Span span;
      if (reader.next(form, span) != ReadStatus::Form) break;
      each(form);
    }
  } catch (const tl::Error& e) {
    if (e.kind() == tl::ErrorKind::Internal) __builtin_trap();
  }
  in.sources.forget_text(file);
}

// Whether `form` holds an uninterned symbol (`#:name` reads as a new one each time).
bool has_uninterned(Value form, int depth = 0) {
  if (depth > 200) return false;
  for (; tl::eval::is_cons(form); form = tl::eval::cdr(form)) {
    if (has_uninterned(tl::eval::car(form), depth + 1)) return true;
  }
  if (tl::eval::is_symbol(form)) return !tl::eval::as_symbol(form)->interned;
  if (tl::eval::is_kind(form, tl::eval::ObjKind::Vector)) {
    for (Value item : tl::eval::as_vector(form)->items) {
      if (has_uninterned(item, depth + 1)) return true;
    }
  }
  return false;
}

// Whether printing `form` and reading the text back gives an equal form. Floats that print as
// nan or inf do not read back as such; a form with uninterned symbols reads back as a form
// with new ones, so for it the text read back must print the same.
bool round_trips(Interp& in, Value form) {
  std::string printed = in.repr(form);
  if (printed.find("nan") != std::string::npos || printed.find("inf") != std::string::npos) return true;
  bool uninterned = has_uninterned(form);
  bool same = false;
  int forms = 0;
  read_all(in, printed, "<fuzz-printed>", [&](Value again) {
    ++forms;
    same = uninterned ? in.repr(again) == printed : tl::eval::equal(form, again);
  });
  return forms == 1 && same;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  tl::Interpreter& lisp = tl::fuzz::interpreter();
  tl::fuzz::InputScope scope;
  Interp& in = lisp.internal();
  std::string text(reinterpret_cast<const char*>(data), size);
  {
    Interp::StackMark mark(in);
    read_all(in, text, "<fuzz>", [&](Value form) {
      in.push(form);  // kept while the round trip allocates
      if (!round_trips(in, form)) __builtin_trap();
    });
  }
  // The REPL asks after each line whether the input so far is complete.
  for (std::size_t cut = 0; cut <= size; cut += 1 + size / 16) {
    try {
      lisp.check_complete(std::string_view(text).substr(0, cut));
    } catch (const tl::Error& e) {
      if (e.kind() == tl::ErrorKind::Internal) __builtin_trap();
    }
  }
  return 0;
}
