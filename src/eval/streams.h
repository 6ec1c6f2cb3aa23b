// SPDX-License-Identifier: Apache-2.0
// String output streams (make-string-output-stream): the one kind of stream besides the
// standard output. The printing builtins (princ, prin1, print, terpri, format, and the Lisp
// functions over them) take one as their stream argument; StreamArg sends the interpreter's
// output into it for the length of the call.
#pragma once

#include <cstdint>
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

inline StringOutputStream* as_string_stream(Value v) {
  if (!is_kind(v, ObjKind::Foreign)) return nullptr;
  return dynamic_cast<StringOutputStream*>(static_cast<Foreign*>(v.o));
}

// The stream argument ARGS[INDEX] of builtin FN: a string output stream, or absent, t or nil
// for the standard output, which is *standard-output*'s value (t, or a string output stream a
// let bound it to). For format, whose nil returns a string, NIL_IS_STANDARD is false. Any
// other value is a type error naming FN. While alive, the interpreter's output goes to the
// stream meant.
class StreamArg {
 public:
  StreamArg(Interp& in, const char* fn, Value* args, std::uint32_t n, std::uint32_t index, bool nil_is_standard = true)
      : in_(in) {
    const bool given = n > index;
    if (given && args[index].is_nil() && !nil_is_standard) return;
    if (!given || args[index].is_nil() || args[index].same(in.t())) {
      Symbol* standard = in.S.standard_output;
      if (standard == nullptr || !standard->bound) return;
      stream_ = as_string_stream(standard->value);
      if (stream_ == nullptr) return;  // t (or anything else: the printer's own output)
    } else {
      stream_ = as_string_stream(args[index]);
      if (stream_ == nullptr) {
        in.type_error(fn, static_cast<int>(index) + 1, "t, nil or a string output stream", args[index]);
      }
    }
    saved_output_ = std::move(in.output);
    saved_at_line_start_ = in.at_line_start;
    StringOutputStream* s = stream_;
    in.output = [s](std::string_view text) { s->text.append(text); };
    in.at_line_start = s->at_line_start;
  }
  ~StreamArg() {
    if (stream_ == nullptr) return;
    stream_->at_line_start = in_.at_line_start;
    in_.output = std::move(saved_output_);
    in_.at_line_start = saved_at_line_start_;
  }
  StreamArg(const StreamArg&) = delete;
  StreamArg& operator=(const StreamArg&) = delete;

 private:
  Interp& in_;
  StringOutputStream* stream_ = nullptr;
  std::function<void(std::string_view)> saved_output_;
  bool saved_at_line_start_ = true;
};

}  // namespace tl::eval
