// SPDX-License-Identifier: Apache-2.0
// The output streams besides the standard output: string output streams
// (make-string-output-stream) and the standard error (*error-output*). The printing builtins
// (princ, prin1, print, terpri, format, and the Lisp functions over them) take one as their
// stream argument; StreamArg sends the interpreter's output into it for the length of the
// call.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <typeinfo>

#include "eval/interp.h"

namespace tl::eval {

struct StringOutputStream final : Foreign {
  std::string text;           // what was written since the last get-output-stream-string
  bool at_line_start = true;  // for ~& and fresh-line
  const char* type_name() const override { return "string-output-stream"; }
  void print(std::string& out) const override { out += "#<string-output-stream>"; }
};

// The process's standard error, unbuffered: *error-output*'s value.
struct ErrorOutputStream final : Foreign {
  bool at_line_start = true;
  const char* type_name() const override { return "error-output-stream"; }
  void print(std::string& out) const override { out += "#<error-output-stream>"; }
};

// The stream V is, or null. The classes are final, so comparing the dynamic type is exact (and
// a tenth of what a dynamic_cast costs on every write to a stream).
template <class S>
S* as_stream(Value v) {
  if (!is_kind(v, ObjKind::Foreign)) return nullptr;
  Foreign* f = static_cast<Foreign*>(v.o);
  return typeid(*f) == typeid(S) ? static_cast<S*>(f) : nullptr;
}

inline StringOutputStream* as_string_stream(Value v) { return as_stream<StringOutputStream>(v); }

inline ErrorOutputStream* as_error_stream(Value v) { return as_stream<ErrorOutputStream>(v); }

// The stream argument ARGS[INDEX] of builtin FN: a string output stream, *error-output*'s
// stream, or absent, t or nil for the standard output, which is *standard-output*'s value (t,
// or a stream a let bound it to). For format, whose nil returns a string, NIL_IS_STANDARD is
// false. Any other value is a type error naming FN. While alive, the interpreter's output
// goes to the stream meant.
class StreamArg {
 public:
  StreamArg(Interp& in, const char* fn, Value* args, std::uint32_t n, std::uint32_t index, bool nil_is_standard = true)
      : in_(in) {
    const bool given = n > index;
    if (given && args[index].is_nil() && !nil_is_standard) return;
    Value target = given ? args[index] : in.t();
    const bool standard_output = target.is_nil() || target.same(in.t());
    if (standard_output) {
      Symbol* standard = in.S.standard_output;
      if (standard == nullptr || !standard->bound) return;
      target = standard->value;  // t (or anything else: the printer's own output), or a stream
    }
    StringOutputStream* string_stream = as_string_stream(target);
    ErrorOutputStream* error_stream = string_stream == nullptr ? as_error_stream(target) : nullptr;
    if (string_stream == nullptr && error_stream == nullptr) {
      if (standard_output) return;
      in.type_error(fn, static_cast<int>(index) + 1, "t, nil or an output stream", target);
    }
    saved_text_ = in.output_text;
    saved_at_line_start_ = in.at_line_start;
    if (string_stream != nullptr) {
      in.output_text = &string_stream->text;
      line_start_ = &string_stream->at_line_start;
    } else {
      saved_output_ = std::move(in.output);
      swapped_output_ = true;
      in.output = [](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stderr); };
      in.output_text = nullptr;
      line_start_ = &error_stream->at_line_start;
    }
    in.at_line_start = *line_start_;
  }
  ~StreamArg() {
    if (line_start_ == nullptr) return;
    *line_start_ = in_.at_line_start;
    in_.output_text = saved_text_;
    if (swapped_output_) in_.output = std::move(saved_output_);
    in_.at_line_start = saved_at_line_start_;
  }
  StreamArg(const StreamArg&) = delete;
  StreamArg& operator=(const StreamArg&) = delete;

 private:
  Interp& in_;
  bool* line_start_ = nullptr;  // the stream's own, while its output is redirected
  std::string* saved_text_ = nullptr;
  std::function<void(std::string_view)> saved_output_;  // only for *error-output*
  bool swapped_output_ = false;
  bool saved_at_line_start_ = true;
};

}  // namespace tl::eval
