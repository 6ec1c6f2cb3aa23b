// SPDX-License-Identifier: Apache-2.0
// Tokenizers as Lisp values: the builtins behind stdlib/tokenizers.lisp (tokenizer.cpp).
#pragma once

namespace tl::eval {
class Interp;
}

namespace tl::text {

// Registers tok:%load-gpt2, tok:%load-hf, tok:%encode, tok:%decode and the vocabulary queries.
void register_tokenizer_builtins(eval::Interp& in);

}  // namespace tl::text
