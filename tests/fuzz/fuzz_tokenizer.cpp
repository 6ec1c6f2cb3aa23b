// SPDX-License-Identifier: Apache-2.0
// tok:load-hf on an arbitrary tokenizer.json (issue 21), then encoding and decoding a fixed
// text with what loaded. A bad file is a Lisp error (read-error, error naming the component);
// a crash, hang, leak or sanitizer report is a bug.
#include <string>

#include "loader_target.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const bool loaded = [] {
    tl::fuzz::interpreter().eval("(require 'tokenizers)", "<fuzz>");
    return true;
  }();
  (void)loaded;
  tl::fuzz::load_through_lisp(data, size, ".json",
                              "(let ((tok (tok:load-hf ~a)))"
                              "  (dolist (text '(\"Hello world, it's 2026!\" \"  "
                              "two\\n\\nlines\\t\" \"héllo 日本 😀 <s></s>\" \"\"))"
                              "    (let ((ids (tok:encode tok text :add-special t)))"
                              "      (tok:decode tok ids)"
                              "      (tok:decode tok ids :skip-special t :lossy nil))))");
  return 0;
}
