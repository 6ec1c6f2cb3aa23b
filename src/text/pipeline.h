// SPDX-License-Identifier: Apache-2.0
// A whole tokenizer as Hugging Face's tokenizers library runs one: added (special) tokens,
// normalizer, pre-tokenizer, BPE model, post-processor and decoder (pipeline.cpp). Built from
// a tokenizer.json or from GPT-2's vocab.json + merges.txt. Knows nothing of Lisp.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "text/bpe.h"

namespace tl::text {

class Tokenizer {
 public:
  Tokenizer();
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // GPT-2's files: encoder.json / vocab.json (token -> id) and vocab.bpe / merges.txt.
  // Throws TokenizerError naming the file and what is wrong.
  static std::unique_ptr<Tokenizer> from_gpt2_files(const std::string& vocab_path,
                                                    const std::string& merges_path);
  // A Hugging Face tokenizer.json with a BPE model. Unsupported components are an error
  // naming them.
  static std::unique_ptr<Tokenizer> from_hf_file(const std::string& path);

  // The ids of `text`. `add_special`: add the post-processor's tokens (Llama's <s>).
  // `split_special`: added tokens written in the text become their ids (as Hugging Face does).
  // `poll`, when given, is called every few thousand words (it may throw to stop the work).
  std::vector<std::int32_t> encode(std::string_view text, bool add_special, bool split_special,
                                   const std::function<void()>& poll = {});
  // The text of `ids`; `skip_special` leaves out special tokens; `lossy` replaces bytes that
  // are not UTF-8 by U+FFFD (else they are returned as they are). Throws for an unknown id.
  std::string decode(const std::vector<std::int32_t>& ids, bool skip_special, bool lossy) const;

  std::size_t vocab_size() const { return id_to_token_.size(); }
  std::int32_t token_to_id(std::string_view token) const;  // -1 when absent
  const std::string* id_to_token(std::int32_t id) const;   // null when absent
  struct AddedToken {
    std::string content;
    std::int32_t id;
    bool special;
  };
  const std::vector<AddedToken>& added_tokens() const { return added_; }
  std::string description;  // "GPT-2 BPE (50257 tokens)", shown when printed

  // One step of a normalizer, pre-tokenizer or decoder (defined in pipeline.cpp).
  struct Step;

 private:
  struct Piece {
    std::string text;
    bool first;  // starts at offset 0 of the input (Metaspace's prepend_scheme "first")
  };
  void encode_segment(std::string text, bool first, std::vector<std::int32_t>& out,
                      const std::function<void()>& poll);
  void pre_tokenize(std::vector<Piece>& pieces);
  void finish_vocab();

  Bpe bpe_;
  std::vector<Step> normalizer_;
  std::vector<Step> pre_tokenizer_;
  std::vector<Step> decoder_;
  bool byte_level_ = false;  // the pre-tokenizer maps bytes to GPT-2's characters
  std::vector<std::int32_t> prefix_ids_, suffix_ids_;          // the post-processor's template
  std::vector<AddedToken> added_;                              // longest first
  std::array<std::vector<std::uint32_t>, 256> added_by_byte_;  // added_ indices by first byte
  std::vector<std::string> id_to_token_;
  std::vector<bool> is_special_;
};

}  // namespace tl::text
