// SPDX-License-Identifier: Apache-2.0
// Tokenizers as Lisp values: a foreign object holding a text::Tokenizer, and the tok:%
// builtins that stdlib/tokenizers.lisp wraps with keyword arguments and documentation.
#include "text/tokenizer.h"

#include "eval/builtins.h"
#include "text/pipeline.h"

namespace tl::text {

using eval::Interp;
using eval::Value;
using Args = Value*;
using N = std::uint32_t;

namespace {

struct TokenizerObj : eval::Foreign {
  std::unique_ptr<Tokenizer> tok;
  const char* type_name() const override { return "tokenizer"; }
  void print(std::string& out) const override { out += "#<tokenizer " + tok->description + ">"; }
};

Tokenizer& arg_tokenizer(Interp& in, const char* fn, Args a, int i) {
  if (eval::is_kind(a[i], eval::ObjKind::Foreign)) {
    if (auto* t = dynamic_cast<TokenizerObj*>(static_cast<eval::Foreign*>(a[i].o))) return *t->tok;
  }
  in.type_error(fn, i + 1, "a tokenizer (from tok:load-gpt2 or tok:load-hf)", a[i]);
}

// Runs `body`, turning a TokenizerError into the Lisp condition it names.
template <class F>
Value guarded(Interp& in, const char* fn, F&& body) {
  try {
    return body();
  } catch (const TokenizerError& e) {
    in.error(e.type, std::string(fn) + ": " + e.what());
  }
}

Value make_tokenizer(Interp& in, std::unique_ptr<Tokenizer> tok) {
  auto* obj = in.heap.make<TokenizerObj>(eval::ObjKind::Foreign);
  // The vocabulary, merge table and cache live outside the heap; count them roughly.
  in.heap.account_external(tok->vocab_size() * 64);
  obj->tok = std::move(tok);
  return Value::object(obj);
}

std::vector<std::int32_t> arg_ids(Interp& in, const char* fn, Args a, int i) {
  std::vector<std::int32_t> ids;
  auto add = [&](Value v) {
    if (!v.is_int() || v.i < 0 || v.i > INT32_MAX)
      in.type_error(fn, i + 1, "a list or vector of token ids (non-negative integers)", a[i]);
    ids.push_back(static_cast<std::int32_t>(v.i));
  };
  if (eval::is_kind(a[i], eval::ObjKind::Vector)) {
    for (Value v : eval::as_vector(a[i])->items) add(v);
  } else if (eval::is_list(a[i])) {
    for (Value v : eval::list_items(in, fn, a[i], i + 1)) add(v);
  } else {
    in.type_error(fn, i + 1, "a list or vector of token ids", a[i]);
  }
  return ids;
}

}  // namespace

void register_tokenizer_builtins(Interp& in) {
  TL_BUILTIN(
      in, "tok:%load-gpt2", 2, 2, "(tok:%load-gpt2 VOCAB-JSON MERGES-TXT)",
      "A GPT-2 byte-level BPE tokenizer from its vocabulary and merges files (see tok:load-gpt2).",
      [](Interp& in, Args a, N) -> Value {
        const std::string& vocab = eval::arg_string(in, "tok:load-gpt2", a, 0)->text;
        const std::string& merges = eval::arg_string(in, "tok:load-gpt2", a, 1)->text;
        return guarded(in, "tok:load-gpt2", [&] {
          return make_tokenizer(in, Tokenizer::from_gpt2_files(vocab, merges));
        });
      });
  TL_BUILTIN(in, "tok:%load-hf", 1, 1, "(tok:%load-hf TOKENIZER-JSON)",
             "A tokenizer from a Hugging Face tokenizer.json with a BPE model (see tok:load-hf).",
             [](Interp& in, Args a, N) -> Value {
               const std::string& path = eval::arg_string(in, "tok:load-hf", a, 0)->text;
               return guarded(in, "tok:load-hf",
                              [&] { return make_tokenizer(in, Tokenizer::from_hf_file(path)); });
             });
  TL_BUILTIN(
      in, "tok:%encode", 4, 4, "(tok:%encode TOKENIZER TEXT ADD-SPECIAL SPLIT-SPECIAL)",
      "The token ids of TEXT as a list (see tok:encode).", [](Interp& in, Args a, N) -> Value {
        Tokenizer& tok = arg_tokenizer(in, "tok:encode", a, 0);
        const std::string& text = eval::arg_string(in, "tok:encode", a, 1)->text;
        return guarded(in, "tok:encode", [&] {
          // Ctrl-C reaches a long text between words.
          std::vector<std::int32_t> ids =
              tok.encode(text, a[2].truthy(), a[3].truthy(), [&] { in.check_interrupt(0x1000); });
          Value list;
          for (auto it = ids.rbegin(); it != ids.rend(); ++it)
            list = in.cons(Value::integer(*it), list);
          return list;
        });
      });
  TL_BUILTIN(in, "tok:%decode", 4, 4, "(tok:%decode TOKENIZER IDS SKIP-SPECIAL LOSSY)",
             "The text of token IDS (see tok:decode).", [](Interp& in, Args a, N) -> Value {
               Tokenizer& tok = arg_tokenizer(in, "tok:decode", a, 0);
               std::vector<std::int32_t> ids = arg_ids(in, "tok:decode", a, 1);
               return guarded(in, "tok:decode", [&] {
                 return in.make_string(tok.decode(ids, a[2].truthy(), a[3].truthy()));
               });
             });
  TL_BUILTIN(in, "tok:%vocab-size", 1, 1, "(tok:%vocab-size TOKENIZER)",
             "The number of token ids: one more than the largest id, added tokens included.",
             [](Interp& in, Args a, N) -> Value {
               return Value::integer(static_cast<std::int64_t>(
                   arg_tokenizer(in, "tok:vocab-size", a, 0).vocab_size()));
             });
  TL_BUILTIN(in, "tok:%token-id", 2, 2, "(tok:%token-id TOKENIZER TOKEN)",
             "The id of the token TOKEN, or nil.", [](Interp& in, Args a, N) -> Value {
               std::int32_t id = arg_tokenizer(in, "tok:token-id", a, 0)
                                     .token_to_id(eval::arg_string(in, "tok:token-id", a, 1)->text);
               return id < 0 ? eval::nil() : Value::integer(id);
             });
  TL_BUILTIN(in, "tok:%id-token", 2, 2, "(tok:%id-token TOKENIZER ID)",
             "The token with id ID as the vocabulary spells it, or nil.",
             [](Interp& in, Args a, N) -> Value {
               const std::string* t =
                   arg_tokenizer(in, "tok:id-token", a, 0)
                       .id_to_token(static_cast<std::int32_t>(std::clamp<std::int64_t>(
                           eval::arg_int(in, "tok:id-token", a, 1), -1, INT32_MAX)));
               return t == nullptr ? eval::nil() : in.make_string(*t);
             });
  TL_BUILTIN(in, "tok:%added-tokens", 1, 1, "(tok:%added-tokens TOKENIZER)",
             "The added tokens as a list of (CONTENT ID SPECIAL), by id.",
             [](Interp& in, Args a, N) -> Value {
               auto added = arg_tokenizer(in, "tok:added-tokens", a, 0).added_tokens();
               std::sort(added.begin(), added.end(),
                         [](const auto& x, const auto& y) { return x.id > y.id; });
               Value list;
               for (const auto& t : added) {
                 list = in.cons(in.list({in.make_string(t.content), Value::integer(t.id),
                                         in.boolean(t.special)}),
                                list);
               }
               return list;
             });
}

}  // namespace tl::text
