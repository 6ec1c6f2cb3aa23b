// SPDX-License-Identifier: Apache-2.0
// Printing and reading kernel optimizations (opts.h).
#include "codegen/opts.h"

#include <cctype>
#include <charconv>
#include <optional>

#include "support/condition_error.h"

namespace tl::codegen {

namespace {

struct OptSpec {
  Opt::Kind kind;
  const char* name;
};
constexpr OptSpec kSpecs[] = {{Opt::Kind::Interchange, "interchange"},
                              {Opt::Kind::Split, "split"},
                              {Opt::Kind::Swap, "swap"},
                              {Opt::Kind::Pack, "pack"},
                              {Opt::Kind::Upcast, "upcast"},
                              {Opt::Kind::Partial, "partial"},
                              {Opt::Kind::Lanes, "lanes"},
                              {Opt::Kind::Qdot, "qdot"},
                              {Opt::Kind::Hoist, "hoist"},
                              {Opt::Kind::Peel, "peel"},
                              {Opt::Kind::Merge, "merge"},
                              {Opt::Kind::Group, "group"}};

[[noreturn]] void fail(std::string_view text, const std::string& what) {
  throw ConditionError("optimizer-error", "opts: " + what + " in \"" + std::string(text) + "\"");
}

// A cursor over the text: words, integers and parentheses.
class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  void skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool at_end() {
    skip();
    return pos_ >= text_.size();
  }
  bool peek(char c) {
    skip();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(text_, std::string("expected '") + c + "' at position " + std::to_string(pos_));
    ++pos_;
  }
  std::string word() {
    skip();
    std::size_t start = pos_;
    while (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '-')) ++pos_;
    if (start == pos_) fail(text_, "expected an opt's name at position " + std::to_string(pos_));
    return std::string(text_.substr(start, pos_ - start));
  }
  std::int64_t integer() {
    skip();
    std::int64_t v = 0;
    auto [end, ec] = std::from_chars(text_.data() + pos_, text_.data() + text_.size(), v);
    if (ec != std::errc()) fail(text_, "expected an integer at position " + std::to_string(pos_));
    pos_ = static_cast<std::size_t>(end - text_.data());
    return v;
  }
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
  std::size_t pos_ = 0;
};

std::int32_t loop_id(Reader& r, bool allow_kernel) {
  std::int64_t v = r.integer();
  if (v < (allow_kernel ? -1 : 0) || v > (1 << 24)) fail(r.text(), "loop id " + std::to_string(v) + " out of range");
  return static_cast<std::int32_t>(v);
}

Opt read_opt(Reader& r) {
  r.expect('(');
  const std::string name = r.word();
  Opt o = Opt::interchange();
  std::optional<Opt::Kind> kind;
  for (const auto& s : kSpecs) {
    if (name == s.name) kind = s.kind;
  }
  if (!kind) {
    fail(r.text(),
         "unknown opt \"" + name +
             "\" (known: interchange, split, swap, pack, upcast, partial, lanes, qdot, hoist, peel, merge, group)");
  }
  o.kind = *kind;
  switch (o.kind) {
    case Opt::Kind::Interchange: break;
    case Opt::Kind::Split:
      o.loop = loop_id(r, false);
      o.amount = r.integer();
      if (o.amount < 1) fail(r.text(), "split needs a positive factor, not " + std::to_string(o.amount));
      break;
    case Opt::Kind::Lanes:
      o.loop = loop_id(r, false);
      o.amount = r.integer();
      if (o.amount < 2) fail(r.text(), "lanes needs at least 2 lanes, not " + std::to_string(o.amount));
      break;
    case Opt::Kind::Qdot:
      o.loop = loop_id(r, false);
      o.amount = r.integer();
      if (o.amount < 4 || o.amount % 4 != 0) {
        fail(r.text(), "qdot needs a block of a multiple of 4 iterations, not " + std::to_string(o.amount));
      }
      break;
    case Opt::Kind::Swap:
    case Opt::Kind::Upcast:
    case Opt::Kind::Partial:
    case Opt::Kind::Peel:
    case Opt::Kind::Merge: o.loop = loop_id(r, false); break;
    case Opt::Kind::Hoist:
      o.loop = loop_id(r, false);
      o.amount = loop_id(r, true);
      break;
    case Opt::Kind::Group:
      o.amount = r.integer();
      if (o.amount != 0 && (o.amount < 32 || o.amount > 1024 || (o.amount & (o.amount - 1)) != 0)) {
        fail(r.text(), "group needs 0 or a power of two from 32 to 1024 threads, not " + std::to_string(o.amount));
      }
      break;
    case Opt::Kind::Pack:
      o.loop = loop_id(r, true);
      o.invariant = loop_id(r, false);
      while (!r.peek(')')) o.order.push_back(loop_id(r, false));
      break;
  }
  r.expect(')');
  return o;
}

}  // namespace

const char* opt_name(Opt::Kind k) {
  for (const auto& s : kSpecs) {
    if (s.kind == k) return s.name;
  }
  return "?";
}

std::string opt_str(const Opt& o) {
  std::string s = std::string("(") + opt_name(o.kind);
  switch (o.kind) {
    case Opt::Kind::Interchange: break;
    case Opt::Kind::Split:
    case Opt::Kind::Lanes:
    case Opt::Kind::Qdot:
    case Opt::Kind::Hoist: s += " " + std::to_string(o.loop) + " " + std::to_string(o.amount); break;
    case Opt::Kind::Swap:
    case Opt::Kind::Upcast:
    case Opt::Kind::Partial:
    case Opt::Kind::Peel:
    case Opt::Kind::Merge: s += " " + std::to_string(o.loop); break;
    case Opt::Kind::Group: s += " " + std::to_string(o.amount); break;
    case Opt::Kind::Pack:
      s += " " + std::to_string(o.loop) + " " + std::to_string(o.invariant);
      for (std::int32_t v : o.order) s += " " + std::to_string(v);
      break;
  }
  return s + ")";
}

std::string opts_str(const Opts& opts) {
  std::string s;
  for (const Opt& o : opts) s += (s.empty() ? "" : " ") + opt_str(o);
  return s;
}

Opts parse_opts(std::string_view text) {
  Reader r(text);
  Opts out;
  if (r.at_end()) return out;
  // An enclosing list: "((split 0 4))", or "()" for none.
  bool wrapped = false;
  {
    Reader probe(text);
    probe.expect('(');
    wrapped = probe.peek('(') || probe.peek(')');
  }
  if (wrapped) r.expect('(');
  while (!r.at_end() && !(wrapped && r.peek(')'))) out.push_back(read_opt(r));
  if (wrapped) r.expect(')');
  if (!r.at_end()) fail(text, "text after the opts");
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (i > 0 && out[i].kind == Opt::Kind::Interchange) fail(text, "interchange must come first");
    if (i + 1 < out.size() && out[i].kind == Opt::Kind::Group) fail(text, "group must come last");
  }
  return out;
}

}  // namespace tl::codegen
