// SPDX-License-Identifier: Apache-2.0
// The tokenizer pipeline of Hugging Face's tokenizers library, for the components GPT-2, Llama 2
// and Llama 3 tokenizer.json files use: added tokens, normalizers (Prepend, Replace, NFC...),
// pre-tokenizers (ByteLevel, Split on a regex, Metaspace), a BPE model, TemplateProcessing, and
// the decoders that undo them. Regexes run on ICU, with \s meaning Unicode White_Space as in
// the Rust and Python regex engines those files were written for.
#include "text/pipeline.h"

#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tl::text {

using Json = nlohmann::json;

// GPT-2's pre-tokenizer regex (encoder.py), used by ByteLevel with use_regex.
constexpr const char* kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct Tokenizer::Step {
  enum class Kind {
    Prepend,
    Replace,
    Normalize,
    Split,
    ByteLevel,
    Metaspace,
    ByteFallback,
    Fuse,
    Strip
  };
  enum class Behavior { Isolated, Removed, MergedWithPrevious, MergedWithNext };
  explicit Step(Kind k, std::string first = "", std::string second = "")
      : kind(k), a(std::move(first)), b(std::move(second)) {}
  Kind kind;
  std::string a, b;  // Prepend: a; Replace: a -> b; Metaspace: a = replacement; Strip: a = content
  int start = 0, stop = 0;  // Strip
  bool flag = false;        // ByteLevel: add_prefix_space; Metaspace: split
  int prepend = 0;          // Metaspace: 0 never, 1 first, 2 always
  Behavior behavior = Behavior::Isolated;
  const icu::Normalizer2* normalizer = nullptr;
  // Split, Replace with a regex, ByteLevel with use_regex; the matcher refers to the pattern,
  // so it is declared after it (and destroyed first).
  std::unique_ptr<icu::RegexPattern> pattern;
  std::unique_ptr<icu::RegexMatcher> regex;
};

namespace {

[[noreturn]] void fail(const std::string& where, const std::string& message) {
  throw TokenizerError("error", where + ": " + message);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw TokenizerError("file-error", "cannot open \"" + path + "\"");
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

Json parse_json_file(const std::string& path) {
  std::string text = read_file(path);
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {  // parse errors, and number overflow ("1e999")
    std::string what = e.what();
    auto tag_end = what.find("] ");
    throw TokenizerError(
        "read-error",
        path + ": " + (tag_end == std::string::npos ? what : what.substr(tag_end + 2)));
  }
}

// \s and \S as Unicode White_Space (Rust's regex and Python's regex module); ICU's own \s
// leaves out \v and U+0085.
std::string rewrite_whitespace_classes(const std::string& pattern) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\' && i + 1 < pattern.size()) {
      char next = pattern[i + 1];
      if (next == 's')
        out += "\\p{White_Space}";
      else if (next == 'S')
        out += "\\P{White_Space}";
      else
        out += pattern.substr(i, 2);
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

void compile_regex(Tokenizer::Step& step, const std::string& where, const std::string& pattern,
                   bool literal) {
  UErrorCode status = U_ZERO_ERROR;
  UParseError perr{};
  icu::UnicodeString upattern =
      icu::UnicodeString::fromUTF8(literal ? pattern : rewrite_whitespace_classes(pattern));
  step.pattern.reset(
      icu::RegexPattern::compile(upattern, literal ? UREGEX_LITERAL : 0, perr, status));
  if (U_FAILURE(status)) {
    fail(where, "cannot compile the regex \"" + pattern + "\" (" + u_errorName(status) +
                    " at offset " + std::to_string(perr.offset) + ")");
  }
  step.regex.reset(step.pattern->matcher(status));
  if (U_FAILURE(status)) fail(where, std::string("cannot use the regex: ") + u_errorName(status));
  // About ten seconds of matching per text at most (the unit is roughly a millisecond).
  step.regex->setTimeLimit(10000, status);
}

std::string pattern_text(const icu::RegexMatcher& re) {
  std::string out;
  re.pattern().pattern().toUTF8String(out);
  return out;
}

// The spans [begin, end) in bytes of every match of `re` in `text`.
std::vector<std::pair<std::size_t, std::size_t>> find_matches(icu::RegexMatcher& re,
                                                              std::string_view text) {
  icu::UnicodeString u = icu::UnicodeString::fromUTF8(
      icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  // Byte offset of each UTF-16 index.
  std::vector<std::size_t> offset(static_cast<std::size_t>(u.length()) + 1, text.size());
  std::size_t byte = 0;
  for (int32_t k = 0; k < u.length();) {
    UChar32 c = u.char32At(k);
    offset[static_cast<std::size_t>(k)] = byte;
    int32_t units = U16_LENGTH(c);
    if (units == 2) offset[static_cast<std::size_t>(k) + 1] = byte;
    byte += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    k += units;
  }
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  UErrorCode status = U_ZERO_ERROR;
  re.reset(u);
  // find(start) resets the matcher, and with it the time limit, so the limit bounds one match
  // rather than the whole text.
  for (int32_t from = 0; from <= u.length() && re.find(from, status) && U_SUCCESS(status);) {
    int32_t s = re.start(status);
    int32_t e = re.end(status);
    spans.emplace_back(offset[static_cast<std::size_t>(s)], offset[static_cast<std::size_t>(e)]);
    from = e > s ? e : e + (e < u.length() ? U16_LENGTH(u.char32At(e)) : 1);
  }
  // A pattern that backtracks without end (from a hostile file) stops at the time limit.
  if (U_FAILURE(status)) {
    throw TokenizerError("error", std::string("the regex \"") + pattern_text(re) +
                                      "\" failed on a text of " + std::to_string(text.size()) +
                                      " bytes: " + u_errorName(status));
  }
  return spans;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  if (from.empty()) return s;
  std::string out;
  std::size_t pos = 0;
  for (std::size_t hit; (hit = s.find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(s, pos, hit - pos);
    out += to;
  }
  out.append(s, pos);
  return out;
}

std::string string_field(const Json& j, const char* key, const std::string& fallback = "") {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->get<std::string>();
}

bool bool_field(const Json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? fallback : it->get<bool>();
}

// A "pattern" field: {"String": s} or {"Regex": r}; returns the text and whether it is a regex.
std::pair<std::string, bool> pattern_field(const std::string& where, const Json& j) {
  const Json& p = j.at("pattern");
  if (p.contains("Regex")) return {p.at("Regex").get<std::string>(), true};
  if (p.contains("String")) return {p.at("String").get<std::string>(), false};
  fail(where, "a pattern must be {\"String\": ...} or {\"Regex\": ...}, got " + p.dump());
}

int prepend_scheme(const Json& j) {
  if (j.contains("prepend_scheme")) {
    std::string s = j.at("prepend_scheme").get<std::string>();
    return s == "never" ? 0 : s == "first" ? 1 : 2;
  }
  return bool_field(j, "add_prefix_space", true) ? 2 : 0;
}

using Step = Tokenizer::Step;

// Ids may leave holes, but not so many that a hostile file makes us allocate gigabytes: an id
// must be below four times the number of tokens the file defines, plus 1024.
std::int64_t max_token_id(std::size_t tokens) {
  return 4 * static_cast<std::int64_t>(tokens) + 1024;
}

std::int32_t checked_id(const std::string& where, const std::string& token, std::int64_t id,
                        std::int64_t max_id) {
  if (id < 0 || id >= max_id) {
    fail(where, "the id " + std::to_string(id) + " of \"" + token + "\" is out of range (0 to " +
                    std::to_string(max_id - 1) + " for a file of this many tokens)");
  }
  return static_cast<std::int32_t>(id);
}

void parse_normalizer(const Json& j, std::vector<Step>& steps) {
  if (j.is_null()) return;
  std::string type = string_field(j, "type");
  const std::string where = "normalizer " + type;
  if (type == "Sequence") {
    for (const Json& n : j.at("normalizers")) parse_normalizer(n, steps);
  } else if (type == "Prepend") {
    steps.push_back(Step{Step::Kind::Prepend, string_field(j, "prepend"), ""});
  } else if (type == "Replace") {
    auto [pattern, is_regex] = pattern_field(where, j);
    Step s{Step::Kind::Replace, pattern, string_field(j, "content")};
    if (is_regex) compile_regex(s, where, pattern, false);
    steps.push_back(std::move(s));
  } else if (type == "NFC" || type == "NFKC" || type == "NFD" || type == "NFKD") {
    UErrorCode status = U_ZERO_ERROR;
    Step s{Step::Kind::Normalize, type, ""};
    s.normalizer = type == "NFC"    ? icu::Normalizer2::getNFCInstance(status)
                   : type == "NFKC" ? icu::Normalizer2::getNFKCInstance(status)
                   : type == "NFD"  ? icu::Normalizer2::getNFDInstance(status)
                                    : icu::Normalizer2::getNFKDInstance(status);
    if (U_FAILURE(status))
      fail(where, std::string("ICU has no such normalizer: ") + u_errorName(status));
    steps.push_back(std::move(s));
  } else {
    fail("tokenizer.json",
         "the normalizer \"" + type +
             "\" is not supported (supported: Sequence, Prepend, Replace, NFC, NFKC, NFD, NFKD)");
  }
}

void parse_pre_tokenizer(const Json& j, std::vector<Step>& steps, bool& byte_level) {
  if (j.is_null()) return;
  std::string type = string_field(j, "type");
  const std::string where = "pre_tokenizer " + type;
  if (type == "Sequence") {
    for (const Json& p : j.at("pretokenizers")) parse_pre_tokenizer(p, steps, byte_level);
  } else if (type == "ByteLevel") {
    Step s{Step::Kind::ByteLevel, "", ""};
    s.flag = bool_field(j, "add_prefix_space", true);
    if (bool_field(j, "use_regex", true)) compile_regex(s, where, kGpt2Pattern, false);
    byte_level = true;
    steps.push_back(std::move(s));
  } else if (type == "Split") {
    auto [pattern, is_regex] = pattern_field(where, j);
    if (bool_field(j, "invert", false)) fail(where, "\"invert\": true is not supported");
    std::string behavior = string_field(j, "behavior", "Isolated");
    Step s{Step::Kind::Split, pattern, ""};
    s.behavior = behavior == "Isolated"             ? Step::Behavior::Isolated
                 : behavior == "Removed"            ? Step::Behavior::Removed
                 : behavior == "MergedWithPrevious" ? Step::Behavior::MergedWithPrevious
                 : behavior == "MergedWithNext"
                     ? Step::Behavior::MergedWithNext
                     : (fail(where, "the behavior \"" + behavior + "\" is not supported"),
                        Step::Behavior::Isolated);
    compile_regex(s, where, pattern, !is_regex);
    steps.push_back(std::move(s));
  } else if (type == "Metaspace") {
    Step s{Step::Kind::Metaspace, string_field(j, "replacement", "\xe2\x96\x81"), ""};
    s.prepend = prepend_scheme(j);
    s.flag = bool_field(j, "split", true);
    steps.push_back(std::move(s));
  } else {
    fail("tokenizer.json",
         "the pre_tokenizer \"" + type +
             "\" is not supported (supported: Sequence, ByteLevel, Split, Metaspace)");
  }
}

void parse_decoder(const Json& j, std::vector<Step>& steps) {
  if (j.is_null()) return;
  std::string type = string_field(j, "type");
  const std::string where = "decoder " + type;
  if (type == "Sequence") {
    for (const Json& d : j.at("decoders")) parse_decoder(d, steps);
  } else if (type == "ByteLevel") {
    steps.push_back(Step{Step::Kind::ByteLevel, "", ""});
  } else if (type == "Replace") {
    auto [pattern, is_regex] = pattern_field(where, j);
    if (is_regex) fail(where, "a regex pattern is not supported in a decoder");
    steps.push_back(Step{Step::Kind::Replace, pattern, string_field(j, "content")});
  } else if (type == "ByteFallback") {
    steps.push_back(Step{Step::Kind::ByteFallback, "", ""});
  } else if (type == "Fuse") {
    steps.push_back(Step{Step::Kind::Fuse, "", ""});
  } else if (type == "Strip") {
    Step s{Step::Kind::Strip, string_field(j, "content", " "), ""};
    s.start = j.value("start", 0);
    s.stop = j.value("stop", 0);
    steps.push_back(std::move(s));
  } else if (type == "Metaspace") {
    Step s{Step::Kind::Metaspace, string_field(j, "replacement", "\xe2\x96\x81"), ""};
    s.prepend = prepend_scheme(j);
    steps.push_back(std::move(s));
  } else {
    fail("tokenizer.json",
         "the decoder \"" + type +
             "\" is not supported (supported: Sequence, ByteLevel, Replace, ByteFallback, "
             "Fuse, Strip, Metaspace)");
  }
}

// TemplateProcessing's "single" template: the special tokens' ids before and after $A.
void parse_post_processor(const Json& j, std::vector<std::int32_t>& prefix,
                          std::vector<std::int32_t>& suffix) {
  if (j.is_null()) return;
  std::string type = string_field(j, "type");
  if (type == "Sequence") {
    for (const Json& p : j.at("processors")) parse_post_processor(p, prefix, suffix);
  } else if (type == "ByteLevel") {
    // Only adjusts offsets; ids are unchanged.
  } else if (type == "TemplateProcessing") {
    bool after = false;
    for (const Json& item : j.at("single")) {
      if (item.contains("Sequence")) {
        after = true;
      } else if (item.contains("SpecialToken")) {
        std::string name = item.at("SpecialToken").at("id").get<std::string>();
        const Json& special = j.at("special_tokens").at(name);
        for (const Json& id : special.at("ids"))
          (after ? suffix : prefix).push_back(id.get<std::int32_t>());
      }
    }
  } else {
    fail("tokenizer.json",
         "the post_processor \"" + type +
             "\" is not supported (supported: Sequence, ByteLevel, TemplateProcessing)");
  }
}

}  // namespace

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::from_gpt2_files(const std::string& vocab_path,
                                                      const std::string& merges_path) {
  auto tok = std::make_unique<Tokenizer>();
  Json vocab = parse_json_file(vocab_path);
  if (!vocab.is_object())
    throw TokenizerError("error", vocab_path + ": expected a JSON object of token -> id");
  const std::int64_t max_id = max_token_id(vocab.size());
  for (auto& [text, id] : vocab.items()) {
    if (!id.is_number_integer())
      throw TokenizerError("error", vocab_path + ": the id of \"" + text + "\" is not an integer");
    tok->bpe_.add_token(text, checked_id(vocab_path, text, id.get<std::int64_t>(), max_id));
  }
  std::istringstream merges(read_file(merges_path));
  std::string line;
  std::size_t line_no = 0;
  try {
    while (std::getline(merges, line)) {
      ++line_no;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty() || (line_no == 1 && line.rfind("#version", 0) == 0)) continue;
      auto space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
        throw TokenizerError("error",
                             "expected two tokens separated by one space, got \"" + line + "\"");
      }
      tok->bpe_.add_merge(line.substr(0, space), line.substr(space + 1));
    }
  } catch (const TokenizerError& e) {
    throw TokenizerError(e.type, merges_path + ":" + std::to_string(line_no) + ": " + e.what());
  }
  tok->bpe_.finish("", false, false, false);
  Step byte_level{Step::Kind::ByteLevel, "", ""};
  compile_regex(byte_level, "GPT-2", kGpt2Pattern, false);
  tok->pre_tokenizer_.push_back(std::move(byte_level));
  tok->decoder_.push_back(Step{Step::Kind::ByteLevel, "", ""});
  tok->byte_level_ = true;
  // Hugging Face's GPT2Tokenizer treats <|endoftext|> as its special token.
  if (std::int32_t eot = tok->bpe_.find("<|endoftext|>"); eot >= 0)
    tok->added_.push_back({"<|endoftext|>", eot, true});
  tok->finish_vocab();
  tok->description = "GPT-2 byte-level BPE, " + std::to_string(tok->vocab_size()) + " tokens";
  return tok;
}

std::unique_ptr<Tokenizer> Tokenizer::from_hf_file(const std::string& path) {
  auto tok = std::make_unique<Tokenizer>();
  Json j = parse_json_file(path);
  try {
    const Json& model = j.at("model");
    std::string type = string_field(model, "type", "BPE");
    if (type != "BPE") fail("model", "the model type \"" + type + "\" is not supported (only BPE)");
    if (model.contains("dropout") && !model.at("dropout").is_null() &&
        model.at("dropout").get<double>() != 0) {
      fail("model", "BPE dropout is not supported");
    }
    if (!string_field(model, "continuing_subword_prefix").empty() ||
        !string_field(model, "end_of_word_suffix").empty()) {
      fail("model", "continuing_subword_prefix and end_of_word_suffix are not supported");
    }
    const Json& vocab = model.at("vocab");
    const std::size_t added_count = j.contains("added_tokens") ? j.at("added_tokens").size() : 0;
    const std::int64_t max_id = max_token_id(vocab.size() + added_count);
    for (auto& [text, id] : vocab.items())
      tok->bpe_.add_token(text, checked_id("model.vocab", text, id.get<std::int64_t>(), max_id));
    for (const Json& m : model.at("merges")) {
      if (m.is_array() && m.size() == 2) {
        tok->bpe_.add_merge(m[0].get<std::string>(), m[1].get<std::string>());
        continue;
      }
      std::string s = m.get<std::string>();
      auto space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
        fail("model.merges", "expected \"A B\" or [\"A\", \"B\"], got " + m.dump());
      }
      tok->bpe_.add_merge(s.substr(0, space), s.substr(space + 1));
    }
    tok->bpe_.finish(string_field(model, "unk_token"), bool_field(model, "byte_fallback", false),
                     bool_field(model, "ignore_merges", false),
                     bool_field(model, "fuse_unk", false));
    if (j.contains("added_tokens")) {
      for (const Json& a : j.at("added_tokens")) {
        std::string content = a.at("content").get<std::string>();
        std::int32_t id =
            checked_id("added_tokens", content, a.at("id").get<std::int64_t>(), max_id);
        tok->added_.push_back({std::move(content), id, bool_field(a, "special", false)});
      }
    }
    parse_normalizer(j.value("normalizer", Json()), tok->normalizer_);
    parse_pre_tokenizer(j.value("pre_tokenizer", Json()), tok->pre_tokenizer_, tok->byte_level_);
    parse_post_processor(j.value("post_processor", Json()), tok->prefix_ids_, tok->suffix_ids_);
    parse_decoder(j.value("decoder", Json()), tok->decoder_);
  } catch (const TokenizerError& e) {
    throw TokenizerError(e.type, path + ": " + e.what());
  } catch (const Json::exception& e) {
    std::string what = e.what();
    auto tag_end = what.find("] ");
    throw TokenizerError("error",
                         path + ": not a tokenizer.json this reader understands: " +
                             (tag_end == std::string::npos ? what : what.substr(tag_end + 2)));
  }
  tok->finish_vocab();
  tok->description = "BPE" + std::string(tok->byte_level_ ? " (byte-level)" : "") + ", " +
                     std::to_string(tok->vocab_size()) + " tokens, from " + path;
  return tok;
}

void Tokenizer::finish_vocab() {
  id_to_token_ = bpe_.tokens();
  for (const auto& a : added_) {
    if (static_cast<std::size_t>(a.id) >= id_to_token_.size())
      id_to_token_.resize(static_cast<std::size_t>(a.id) + 1);
    id_to_token_[static_cast<std::size_t>(a.id)] = a.content;
  }
  is_special_.assign(id_to_token_.size(), false);
  for (const auto& a : added_) is_special_[static_cast<std::size_t>(a.id)] = a.special;
  // Longest first, so matching the first candidate that fits is leftmost-longest.
  std::stable_sort(added_.begin(), added_.end(), [](const AddedToken& x, const AddedToken& y) {
    return x.content.size() > y.content.size();
  });
  for (auto& v : added_by_byte_) v.clear();
  for (std::size_t k = 0; k < added_.size(); ++k) {
    if (!added_[k].content.empty())
      added_by_byte_[static_cast<unsigned char>(added_[k].content[0])].push_back(
          static_cast<std::uint32_t>(k));
  }
}

std::int32_t Tokenizer::token_to_id(std::string_view token) const {
  for (const auto& a : added_) {
    if (a.content == token) return a.id;
  }
  return bpe_.find(token);
}

const std::string* Tokenizer::id_to_token(std::int32_t id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= id_to_token_.size()) return nullptr;
  const std::string& s = id_to_token_[static_cast<std::size_t>(id)];
  return s.empty() ? nullptr : &s;
}

std::vector<std::int32_t> Tokenizer::encode(std::string_view text, bool add_special,
                                            bool split_special, const std::function<void()>& poll) {
  std::vector<std::int32_t> out;
  if (add_special) out = prefix_ids_;
  std::size_t start = 0;
  std::size_t i = 0;
  while (split_special && !added_.empty() && i < text.size()) {
    const AddedToken* hit = nullptr;
    for (std::uint32_t k : added_by_byte_[static_cast<unsigned char>(text[i])]) {
      if (text.compare(i, added_[k].content.size(), added_[k].content) == 0) {
        hit = &added_[k];
        break;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    if (i > start)
      encode_segment(std::string(text.substr(start, i - start)), start == 0, out, poll);
    out.push_back(hit->id);
    i += hit->content.size();
    start = i;
  }
  if (start < text.size()) encode_segment(std::string(text.substr(start)), start == 0, out, poll);
  if (add_special) out.insert(out.end(), suffix_ids_.begin(), suffix_ids_.end());
  return out;
}

void Tokenizer::encode_segment(std::string text, bool first, std::vector<std::int32_t>& out,
                               const std::function<void()>& poll) {
  for (Step& s : normalizer_) {
    switch (s.kind) {
      case Step::Kind::Prepend:
        if (!text.empty()) text = s.a + text;
        break;
      case Step::Kind::Replace:
        if (s.regex) {
          std::string replaced;
          std::size_t pos = 0;
          for (auto [b, e] : find_matches(*s.regex, text)) {
            replaced.append(text, pos, b - pos);
            replaced += s.b;
            pos = e;
          }
          text = replaced + text.substr(pos);
        } else {
          text = replace_all(std::move(text), s.a, s.b);
        }
        break;
      case Step::Kind::Normalize: {
        UErrorCode status = U_ZERO_ERROR;
        icu::UnicodeString u = s.normalizer->normalize(icu::UnicodeString::fromUTF8(text), status);
        text.clear();
        u.toUTF8String(text);
        break;
      }
      default:
        break;
    }
  }
  std::vector<Piece> pieces{{std::move(text), first}};
  pre_tokenize(pieces);
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    if (poll && (k & 0xfff) == 0xfff) poll();
    bpe_.encode_word(pieces[k].text, out);
  }
}

void Tokenizer::pre_tokenize(std::vector<Piece>& pieces) {
  auto split = [&](icu::RegexMatcher& re, Step::Behavior behavior) {
    std::vector<Piece> next;
    for (Piece& p : pieces) {
      std::size_t pos = 0;
      std::string pending;  // a match waiting to be merged with the next gap
      bool first = p.first;
      auto emit = [&](std::string s) {
        if (!s.empty()) next.push_back({std::move(s), first});
        first = false;
      };
      for (auto [b, e] : find_matches(re, p.text)) {
        std::string gap = pending + p.text.substr(pos, b - pos);
        std::string match = p.text.substr(b, e - b);
        pending.clear();
        switch (behavior) {
          case Step::Behavior::Isolated:
            emit(gap), emit(match);
            break;
          case Step::Behavior::Removed:
            emit(gap);
            break;
          case Step::Behavior::MergedWithPrevious:
            emit(gap + match);
            break;
          case Step::Behavior::MergedWithNext:
            emit(gap), pending = match;
            break;
        }
        pos = e;
      }
      emit(pending + p.text.substr(pos));
    }
    pieces = std::move(next);
  };
  for (Step& s : pre_tokenizer_) {
    if (s.kind == Step::Kind::Split) {
      split(*s.regex, s.behavior);
    } else if (s.kind == Step::Kind::ByteLevel) {
      if (s.flag) {
        for (Piece& p : pieces) {
          if (p.text.empty() || p.text[0] != ' ') p.text = " " + p.text;
        }
      }
      if (s.regex) split(*s.regex, Step::Behavior::Isolated);
      const auto& chars = byte_chars();
      for (Piece& p : pieces) {
        std::string mapped;
        mapped.reserve(p.text.size() * 2);
        for (char c : p.text) mapped += chars[static_cast<unsigned char>(c)];
        p.text = std::move(mapped);
      }
    } else if (s.kind == Step::Kind::Metaspace) {
      for (Piece& p : pieces) {
        p.text = replace_all(std::move(p.text), " ", s.a);
        bool prepend = s.prepend == 2 || (s.prepend == 1 && p.first);
        if (prepend && p.text.rfind(s.a, 0) != 0) p.text = s.a + p.text;
      }
      if (s.flag) {
        // Split before each replacement character, which starts the next piece.
        std::vector<Piece> next;
        for (Piece& p : pieces) {
          std::size_t begin = 0;
          for (std::size_t hit = p.text.find(s.a, 1); hit != std::string::npos;
               hit = p.text.find(s.a, hit + 1)) {
            if (hit > begin)
              next.push_back({p.text.substr(begin, hit - begin), p.first && begin == 0});
            begin = hit;
          }
          if (begin < p.text.size()) next.push_back({p.text.substr(begin), p.first && begin == 0});
        }
        pieces = std::move(next);
      }
    }
  }
}

std::string Tokenizer::decode(const std::vector<std::int32_t>& ids, bool skip_special,
                              bool lossy) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (std::int32_t id : ids) {
    const std::string* t = id_to_token(id);
    if (t == nullptr) {
      throw TokenizerError("index-error",
                           "token id " + std::to_string(id) + " is not in the vocabulary (0.." +
                               std::to_string(static_cast<std::int64_t>(vocab_size()) - 1) + ")");
    }
    if (skip_special && is_special_[static_cast<std::size_t>(id)]) continue;
    tokens.push_back(*t);
  }
  for (const Step& s : decoder_) {
    switch (s.kind) {
      case Step::Kind::ByteLevel: {
        std::string bytes;
        for (const std::string& t : tokens) {
          for (std::size_t i = 0; i < t.size();) {
            std::size_t start = i;
            int b = char_byte(next_code_point(t, i));
            if (b >= 0)
              bytes += static_cast<char>(b);
            else
              bytes.append(t, start, i - start);
          }
        }
        tokens.assign(1, std::move(bytes));
        break;
      }
      case Step::Kind::Replace:
        for (std::string& t : tokens) t = replace_all(std::move(t), s.a, s.b);
        break;
      case Step::Kind::ByteFallback: {
        // Runs of <0xXX> tokens become their bytes; a run that is not UTF-8 becomes one U+FFFD
        // per byte, as Hugging Face's decoder does.
        std::vector<std::string> next;
        std::string run;
        std::size_t run_length = 0;
        auto flush = [&] {
          if (run_length == 0) return;
          if (!lossy || utf8_lossy(run) == run) {
            next.push_back(run);
          } else {
            std::string repl;
            for (std::size_t k = 0; k < run_length; ++k) repl += "\xef\xbf\xbd";
            next.push_back(repl);
          }
          run.clear();
          run_length = 0;
        };
        for (std::string& t : tokens) {
          unsigned value = 0;
          if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' &&
              std::sscanf(t.c_str() + 3, "%2X", &value) == 1) {
            run += static_cast<char>(value);
            ++run_length;
          } else {
            flush();
            next.push_back(std::move(t));
          }
        }
        flush();
        tokens = std::move(next);
        break;
      }
      case Step::Kind::Fuse: {
        std::string all;
        for (const std::string& t : tokens) all += t;
        tokens.assign(1, std::move(all));
        break;
      }
      case Step::Kind::Strip:
        for (std::string& t : tokens) {
          for (int k = 0; k < s.start && t.rfind(s.a, 0) == 0; ++k) t.erase(0, s.a.size());
          for (int k = 0; k < s.stop && t.size() >= s.a.size() &&
                          t.compare(t.size() - s.a.size(), s.a.size(), s.a) == 0;
               ++k) {
            t.erase(t.size() - s.a.size());
          }
        }
        break;
      case Step::Kind::Metaspace:
        for (std::size_t k = 0; k < tokens.size(); ++k) {
          tokens[k] = replace_all(std::move(tokens[k]), s.a, " ");
          if (k == 0 && s.prepend != 0 && tokens[k].rfind(' ', 0) == 0) tokens[k].erase(0, 1);
        }
        break;
      default:
        break;
    }
  }
  std::string text;
  for (const std::string& t : tokens) text += t;
  return lossy ? utf8_lossy(text) : text;
}

}  // namespace tl::text
