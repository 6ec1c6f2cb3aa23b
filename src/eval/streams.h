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

#include "eval/interp.h"

namespace tl::eval {

struct StringOutputStream : Foreign {
  std::string text;           // what was written since the last get-output-stream-string
  bool at_line_start = true;  // for ~& and fresh-line
  const char* type_name() const override { return "string-output-stream"; }
  void print(std::string& out) const override { out += "#<string-output-stream>"; }
};

// The process's standard error, unbuffered: *error-output*'s value.
struct ErrorOutputStream : Foreign {
  bool at_line_start = true;
  const char* type_name() const override { return "error-output-stream"; }
  void print(std::string& out) const override { out += "#<error-output-stream>"; }
};

inline StringOutputStream* as_string_stream(Value v) {
  if (!is_kind(v, ObjKind::Foreign)) return nullptr;
  return dynamic_cast<StringOutputStream*>(static_cast<Foreign*>(v.o));
}

inline ErrorOutputStream* as_error_stream(Value v) {
  if (!is_kind(v, ObjKind::Foreign)) return nullptr;
  return dynamic_cast<ErrorOutputStream*>(static_cast<Foreign*>(v.o));
}

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
    if (target.is_nil() || target.same(in.t())) {
      Symbol* standard = in.S.standard_output;
      if (standard == nullptr || !standard->bound) return;
      target = standard->value;  // t (or anything else: the printer's own output), or a stream
      if (as_string_stream(target) == nullptr && as_error_stream(target) == nullptr) return;
    } else if (as_string_stream(target) == nullptr && as_error_stream(target) == nullptr) {
      in.type_error(fn, static_cast<int>(index) + 1, "t, nil or an output stream", target);
    }
    saved_output_ = std::move(in.output);
    saved_at_line_start_ = in.at_line_start;
    if (StringOutputStream* s = as_string_stream(target)) {
      in.output = [s](std::string_view text) { s->text.append(text); };
      line_start_ = &s->at_line_start;
    } else {
      in.output = [](std::string_view text) { std::fwrite(text.data(), 1, text.size(), stderr); };
      line_start_ = &as_error_stream(target)->at_line_start;
    }
    in.at_line_start = *line_start_;
  }
  ~StreamArg() {
    if (line_start_ == nullptr) return;
    *line_start_ = in_.at_line_start;
    in_.output = std::move(saved_output_);
    in_.at_line_start = saved_at_line_start_;
  }
  StreamArg(const StreamArg&) = delete;
  StreamArg& operator=(const StreamArg&) = delete;

 private:
  Interp& in_;
  bool* line_start_ = nullptr;  // the stream's own, while its output is redirected
  std::function<void(std::string_view)> saved_output_;
  bool saved_at_line_start_ = true;
};

}  // namespace tl::eval
