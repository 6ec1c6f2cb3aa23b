// SPDX-License-Identifier: Apache-2.0
// Sequence functions with Common Lisp's keyword arguments (:test, :test-not, :key, :start,
// :end, :from-end, :count): member, assoc, find, position, count, remove, delete, substitute,
// remove-duplicates, union, intersection, set-difference, search, mismatch (issue 25).
#include <algorithm>
#include <set>

#include "eval/builtins.h"
#include "eval/utf8.h"

namespace tl::eval {

namespace {

using Args = Value*;
using N = std::uint32_t;

// The keywords a function accepts, as a bit set.
enum Keyword : unsigned {
  kTest = 1u << 0,
  kTestNot = 1u << 1,
  kKey = 1u << 2,
  kStart = 1u << 3,
  kEnd = 1u << 4,
  kFromEnd = 1u << 5,
  kCount = 1u << 6,
  kStart1 = 1u << 7,
  kEnd1 = 1u << 8,
  kStart2 = 1u << 9,
  kEnd2 = 1u << 10,
};
constexpr unsigned kTests = kTest | kTestNot | kKey;
constexpr unsigned kBounds = kStart | kEnd;

constexpr const char* kKeywordNames[] = {"test",  "test-not", "key",  "start",  "end", "from-end",
                                         "count", "start1",   "end1", "start2", "end2"};

struct Options {
  Value test;  // nil: the default test (eql)
  bool test_not = false;
  Value key;                                            // nil: the element itself
  Value start, end, start1, end1, start2, end2, count;  // nil when not given
  bool from_end = false;
};

std::string keyword_list(unsigned allowed) {
  std::string out;
  for (unsigned i = 0; i < std::size(kKeywordNames); ++i) {
    if (!(allowed & (1u << i))) continue;
    out += (out.empty() ? ":" : ", :") + std::string(kKeywordNames[i]);
  }
  return out;
}

// Reads the keyword arguments args[from..n). A function where a keyword belongs is the old
// positional test (member x l #'equal), refused with a message saying how to write it now.
Options parse_options(Interp& in, const char* fn, Args a, N from, N n, unsigned allowed) {
  Options o;
  bool has_test = false;
  for (N i = from; i < n; i += 2) {
    Value k = a[i];
    if (!is_symbol(k) || !as_symbol(k)->is_keyword()) {
      if (is_function(k) && i == from) {
        in.error("program-error",
                 std::string(fn) + ": the test is a keyword argument, as in Common Lisp: write (" +
                     fn + " ... :test " + in.repr(k) + "), not a positional test");
      }
      in.error("program-error", std::string(fn) + ": expected a keyword argument (" +
                                    keyword_list(allowed) + "), got " + in.repr(k));
    }
    const std::string& name = as_symbol(k)->name;
    unsigned bit = 0;
    for (unsigned j = 0; j < std::size(kKeywordNames); ++j) {
      if (name == kKeywordNames[j]) bit = 1u << j;
    }
    if (bit == 0 || !(allowed & bit)) {
      in.error("program-error", std::string(fn) + ": unknown keyword argument :" + name +
                                    "; expected " + keyword_list(allowed));
    }
    if (i + 1 >= n)
      in.error("program-error", std::string(fn) + ": keyword :" + name + " has no value");
    Value v = a[i + 1];
    auto function_value = [&](int pos) {
      // A symbol names its global function, as with funcall.
      if (is_symbol(v) && !v.is_nil() && as_symbol(v)->bound && is_function(as_symbol(v)->value)) {
        a[i + 1] = v = as_symbol(v)->value;
      }
      if (!v.is_nil() && !is_function(v)) in.type_error(fn, pos, "a function", v);
    };
    switch (bit) {
      case kTest:
      case kTestNot:
        function_value(static_cast<int>(i + 2));
        if (has_test)
          in.error("program-error",
                   std::string(fn) + ": give one of :test and :test-not, not both");
        has_test = true;
        o.test = v;
        o.test_not = bit == kTestNot;
        break;
      case kKey:
        function_value(static_cast<int>(i + 2));
        o.key = v;
        break;
      case kStart: o.start = v; break;
      case kEnd: o.end = v; break;
      case kStart1: o.start1 = v; break;
      case kEnd1: o.end1 = v; break;
      case kStart2: o.start2 = v; break;
      case kEnd2: o.end2 = v; break;
      case kCount: o.count = v; break;
      case kFromEnd: o.from_end = v.truthy(); break;
      default: break;
    }
  }
  return o;
}

// The default test: eql. A string's elements are characters, which eql compares by code.
inline bool default_eql(Value a, Value b, bool chars) {
  (void)chars;
  return a.same(b);
}

// Applies :key and :test (or :test-not, or a predicate for the -if forms) to elements. Two
// value-stack slots hold the arguments of the calls, so they stay rooted.
class Matcher {
 public:
  Matcher(Interp& in, const Options& o, Value item, bool chars)
      : in_(in), test_(o.test), key_(o.key), item_(item), negate_(o.test_not), chars_(chars) {
    slots_ = in.sp;
    in.push(nil());
    in.push(nil());
    // :test #'eql and #'equal (the builtins) compare here, without a call per element.
    if (is_kind(test_, ObjKind::Native)) {
      const std::string& name = as_native(test_)->name;
      if (name == "eql" || name == "eq") inline_ = Inline::Eql;
      if (name == "equal") inline_ = Inline::Equal;
    }
  }
  // For the -if and -if-not forms: PRED is called on the key of each element.
  static Matcher predicate(Interp& in, const Options& o, Value pred, bool negate) {
    Matcher m(in, o, nil(), false);
    m.inline_ = Inline::None;
    m.test_ = pred;
    m.negate_ = negate;
    m.unary_ = true;
    return m;
  }
  Value key(Value elem) {
    if (key_.is_nil()) return elem;
    slots_[1] = elem;
    return in_.apply(key_, slots_ + 1, 1);
  }
  // (test ITEM (key ELEM)), or (pred (key ELEM)).
  bool matches(Value elem) { return compare(item_, key(elem)); }
  // The test on two values already keyed, in the order given.
  bool compare(Value x, Value y) {
    if (test_.is_nil() || inline_ == Inline::Eql) return default_eql(x, y, chars_) != negate_;
    if (inline_ == Inline::Equal) return equal(x, y, &in_) != negate_;
    if (unary_) {
      slots_[1] = y;
      return in_.apply(test_, slots_ + 1, 1).truthy() != negate_;
    }
    slots_[0] = x;
    slots_[1] = y;
    return in_.apply(test_, slots_, 2).truthy() != negate_;
  }

 private:
  Interp& in_;
  Value test_, key_, item_;
  Value* slots_ = nullptr;
  bool negate_;
  bool chars_;
  bool unary_ = false;
  enum class Inline { None, Eql, Equal } inline_ = Inline::None;
};

// The elements of a sequence argument (list, vector or string) by index. A string's elements
// are its characters (decoded from UTF-8).
class Elements {
 public:
  Elements(Interp& in, const char* fn, Args a, int arg) {
    Value seq = a[arg];
    if (eval::is_string(seq)) {
      text_ = as_string(seq)->text;
      is_string_ = true;
      for (std::size_t pos = 0; pos < text_.size();) items_.push_back(Value::character(next_utf8(text_, pos)));
    } else if (is_kind(seq, ObjKind::Vector)) {
      items_ = as_vector(seq)->items;
      is_vector_ = true;
    } else if (is_list(seq)) {
      items_ = list_items(in, fn, seq, arg + 1);
    } else {
      in.type_error(fn, arg + 1, "a sequence", seq);
    }
  }
  std::size_t size() const { return items_.size(); }
  bool is_string() const { return is_string_; }
  bool is_vector() const { return is_vector_; }
  Value operator[](std::size_t i) const { return items_[i]; }
  const std::string& text() const { return text_; }
  const std::vector<Value>& items() const { return items_; }

 private:
  std::vector<Value> items_;
  std::string text_;
  bool is_string_ = false;
  bool is_vector_ = false;
};

// [start, end) from :start and :end (or :start1/:end1 ...), checked against the length.
std::pair<std::size_t, std::size_t> bounds(Interp& in, const char* fn, Value start, Value end,
                                           std::size_t len, const char* start_name = "start",
                                           const char* end_name = "end") {
  std::int64_t s = 0, e = static_cast<std::int64_t>(len);
  if (!start.is_nil()) {
    if (!start.is_int())
      in.error("type-error",
               std::string(fn) + ": :" + start_name + " must be an integer, got " + in.repr(start));
    s = start.i;
  }
  if (!end.is_nil()) {
    if (!end.is_int())
      in.error("type-error", std::string(fn) + ": :" + end_name +
                                 " must be an integer or nil, got " + in.repr(end));
    e = end.i;
  }
  if (s < 0 || e > static_cast<std::int64_t>(len) || s > e) {
    in.error("index-error", std::string(fn) + ": :" + start_name + " " + std::to_string(s) +
                                " and :" + end_name + " " + std::to_string(e) +
                                " are out of range for a sequence of length " +
                                std::to_string(len));
  }
  return {static_cast<std::size_t>(s), static_cast<std::size_t>(e)};
}

std::size_t count_limit(Interp& in, const char* fn, Value count) {
  if (count.is_nil()) return SIZE_MAX;
  if (!count.is_int())
    in.error("type-error",
             std::string(fn) + ": :count must be an integer or nil, got " + in.repr(count));
  return count.i < 0 ? 0 : static_cast<std::size_t>(count.i);
}

// A sequence of the same kind as the original holding `items`.
Value same_kind(Interp& in, const Elements& seq, std::vector<Value>& items) {
  if (seq.is_vector()) return in.make_vector(std::move(items));
  if (seq.is_string()) {
    std::string s;
    for (Value v : items) {
      if (v.is_char()) append_utf8(s, static_cast<std::uint32_t>(v.i));
      else if (is_string(v)) s += as_string(v)->text;
      else in.type_error("substitute", 1, "a character (an element of a string)", v);
    }
    return in.make_string(std::move(s));
  }
  return in.list_from(items.data(), items.size());
}

// --- member, assoc ----------------------------------------------------------------------------

enum class Mode { Item, If, IfNot };

Value member(Interp& in, const char* fn, Args a, N n, Mode mode) {
  arg_list(in, fn, a, 1);
  if (mode == Mode::Item && n == 2) {  // the common call: eql, no keywords
    for (ListWalk walk(in, fn, 2, a[1]); !walk.done(); walk.next()) {
      if (walk.item().same(a[0])) return walk.cell();
    }
    return nil();
  }
  Interp::StackMark mark(in);
  Options o = parse_options(in, fn, a, 2, n, mode == Mode::Item ? kTests : kKey);
  if (mode != Mode::Item) arg_function(in, fn, a, 0);
  Matcher m = mode == Mode::Item ? Matcher(in, o, a[0], false)
                                 : Matcher::predicate(in, o, a[0], mode == Mode::IfNot);
  for (ListWalk walk(in, fn, 2, a[1]); !walk.done(); walk.next()) {
    if (m.matches(walk.item())) return walk.cell();
  }
  return nil();
}

// assoc compares the car of each pair, rassoc the cdr; nil elements are skipped.
Value assoc(Interp& in, const char* fn, Args a, N n, Mode mode, bool by_cdr) {
  arg_list(in, fn, a, 1);
  if (mode == Mode::Item && n == 2) {
    for (ListWalk walk(in, fn, 2, a[1]); !walk.done(); walk.next()) {
      Value pair = walk.item();
      if (is_cons(pair) && (by_cdr ? cdr(pair) : car(pair)).same(a[0])) return pair;
    }
    return nil();
  }
  Interp::StackMark mark(in);
  Options o = parse_options(in, fn, a, 2, n, mode == Mode::Item ? kTests : kKey);
  if (mode != Mode::Item) arg_function(in, fn, a, 0);
  Matcher m = mode == Mode::Item ? Matcher(in, o, a[0], false)
                                 : Matcher::predicate(in, o, a[0], mode == Mode::IfNot);
  for (ListWalk walk(in, fn, 2, a[1]); !walk.done(); walk.next()) {
    Value pair = walk.item();
    if (is_cons(pair) && m.matches(by_cdr ? cdr(pair) : car(pair))) return pair;
  }
  return nil();
}

// --- find, position, count -------------------------------------------------------------------

enum class Scan { Find, Position, Count };

Value scan(Interp& in, const char* fn, Args a, N n, Mode mode, Scan what) {
  if (mode == Mode::Item && n == 2 && is_list(a[1])) {  // the common call
    std::int64_t hits = 0;
    for (ListWalk walk(in, fn, 2, a[1]); !walk.done(); walk.next()) {
      if (!walk.item().same(a[0])) continue;
      if (what == Scan::Find) return walk.item();
      if (what == Scan::Position) return Value::integer(static_cast<std::int64_t>(walk.index()));
      ++hits;
    }
    return what == Scan::Count ? Value::integer(hits) : nil();
  }
  Interp::StackMark mark(in);
  unsigned allowed = kBounds | kFromEnd | (mode == Mode::Item ? kTests : kKey);
  Options o = parse_options(in, fn, a, 2, n, allowed);
  if (mode != Mode::Item) arg_function(in, fn, a, 0);
  Elements seq(in, fn, a, 1);
  Matcher m = mode == Mode::Item ? Matcher(in, o, a[0], seq.is_string())
                                 : Matcher::predicate(in, o, a[0], mode == Mode::IfNot);
  auto [start, end] = bounds(in, fn, o.start, o.end, seq.size());
  std::int64_t hits = 0;
  for (std::size_t k = 0; k < end - start; ++k) {
    std::size_t i = o.from_end ? end - 1 - k : start + k;
    if ((k & 0xfff) == 0xfff) in.check_interrupt(0x1000);
    Value elem = seq[i];
    if (!m.matches(elem)) continue;
    if (what == Scan::Find) return seq[i];
    if (what == Scan::Position) return Value::integer(static_cast<std::int64_t>(i));
    ++hits;
  }
  return what == Scan::Count ? Value::integer(hits) : nil();
}

// --- remove, delete, substitute --------------------------------------------------------------

enum class Edit { Remove, Delete, Substitute };

// Which elements of SEQ match, honouring :start, :end, :count and :from-end.
std::vector<char> matched(Interp& in, const char* fn, Elements& seq, Matcher& m, const Options& o) {
  auto [start, end] = bounds(in, fn, o.start, o.end, seq.size());
  std::size_t limit = count_limit(in, fn, o.count);
  std::vector<char> hit(seq.size(), 0);
  std::size_t hits = 0;
  for (std::size_t k = 0; k < end - start && hits < limit; ++k) {
    std::size_t i = o.from_end ? end - 1 - k : start + k;
    if ((k & 0xfff) == 0xfff) in.check_interrupt(0x1000);
    if (m.matches(seq[i])) {
      hit[i] = 1;
      ++hits;
    }
  }
  return hit;
}

// Unlinks the cells of LIST whose element is marked in HIT; returns the new head.
Value unlink_cells(Value list, const std::vector<char>& hit) {
  Value head = nil();
  Cons* last = nullptr;
  std::size_t i = 0;
  for (Value v = list; is_cons(v); v = cdr(v), ++i) {
    if (hit[i]) continue;
    if (last == nullptr)
      head = v;
    else
      last->cdr = v;
    last = as_cons(v);
  }
  if (last != nullptr) last->cdr = nil();
  return head;
}

Value edit(Interp& in, const char* fn, Args a, N n, Mode mode, Edit what) {
  // substitute's arguments are NEW then ITEM (or PREDICATE) then SEQUENCE.
  const int lead = what == Edit::Substitute ? 1 : 0;
  Value item = a[lead];
  Value* seq_arg = a + lead + 1;
  if (mode == Mode::Item && what == Edit::Remove && n == 2 && is_list(a[1])) {  // the common call
    // No collection happens inside a builtin that calls no Lisp, so the new cells need no root.
    Value head = nil();
    Cons* last = nullptr;
    ListWalk walk(in, fn, 2, a[1]);
    for (; !walk.done(); walk.next()) {
      if (walk.item().same(item)) continue;
      Cons* cell = in.heap.make_cons(walk.item(), nil());
      if (last == nullptr)
        head = Value::object(cell);
      else
        last->cdr = Value::object(cell);
      last = cell;
    }
    walk.require_proper();
    return head;
  }
  Interp::StackMark mark(in);
  unsigned allowed = kBounds | kFromEnd | kCount | (mode == Mode::Item ? kTests : kKey);
  Options o = parse_options(in, fn, a, static_cast<N>(lead + 2), n, allowed);
  if (mode != Mode::Item) arg_function(in, fn, a, lead);
  Elements seq(in, fn, a, lead + 1);
  Matcher m = mode == Mode::Item ? Matcher(in, o, item, seq.is_string())
                                 : Matcher::predicate(in, o, item, mode == Mode::IfNot);
  std::vector<char> hit = matched(in, fn, seq, m, o);
  if (what == Edit::Delete && !seq.is_string() && !seq.is_vector())
    return unlink_cells(*seq_arg, hit);
  std::vector<Value> out;
  out.reserve(seq.size());
  for (std::size_t i = 0; i < seq.size(); ++i) {
    if (!hit[i])
      out.push_back(seq.items()[i]);
    else if (what == Edit::Substitute)
      out.push_back(a[0]);
  }
  return same_kind(in, seq, out);
}

// --- remove-duplicates, union, intersection, set-difference ----------------------------------

void dedup_with_test(Interp& in, Elements& seq, Matcher& m, bool from_end, std::size_t start,
                     std::size_t end, std::vector<char>& hit);

// Without :from-end an element goes when a later one matches it (the last occurrence stays),
// with :from-end when an earlier one does (the first stays).
Value remove_duplicates(Interp& in, const char* fn, Args a, N n, bool destructive) {
  Interp::StackMark mark(in);
  Options o = parse_options(in, fn, a, 1, n, kTests | kBounds | kFromEnd);
  Elements seq(in, fn, a, 0);
  Matcher m(in, o, nil(), seq.is_string());
  auto [start, end] = bounds(in, fn, o.start, o.end, seq.size());
  std::vector<char> hit(seq.size(), 0);
  if (o.test.is_nil() && o.key.is_nil()) {
    // eql is sameness of (tag, bits), or of the character in a string: a set finds the
    // duplicates in O(n log n), walking from the end that keeps its occurrence.
    std::set<std::pair<int, std::int64_t>> seen;
    for (std::size_t k = 0; k < end - start; ++k) {
      std::size_t i = o.from_end ? start + k : end - 1 - k;
      auto id = std::pair<int, std::int64_t>(static_cast<int>(seq.items()[i].tag), seq.items()[i].i);
      if (!seen.insert(id).second) hit[i] = 1;
    }
  } else {
    dedup_with_test(in, seq, m, o.from_end, start, end, hit);
  }
  if (destructive && !seq.is_string() && !seq.is_vector()) return unlink_cells(a[0], hit);
  std::vector<Value> out;
  for (std::size_t i = 0; i < seq.size(); ++i) {
    if (!hit[i])
      out.push_back(seq.items()[i]);
  }
  return same_kind(in, seq, out);
}

// remove-duplicates with a :test or :key: each element against the later ones (or, with
// :from-end, the earlier ones), O(n^2) calls as in every Common Lisp.
void dedup_with_test(Interp& in, Elements& seq, Matcher& m, bool from_end, std::size_t start,
                     std::size_t end, std::vector<char>& hit) {
  // Keys are computed once each and kept on the value stack.
  Value* keys = in.sp;
  for (std::size_t i = start; i < end; ++i) in.push(nil());
  for (std::size_t i = start; i < end; ++i) keys[i - start] = m.key(seq[i]);
  for (std::size_t i = start; i < end; ++i) {
    if ((i & 0xff) == 0xff) in.check_interrupt(0x100);
    std::size_t lo = from_end ? start : i + 1, hi = from_end ? i : end;
    for (std::size_t j = lo; j < hi; ++j) {
      if (hit[j]) continue;
      // CL calls the test with the earlier element first.
      if (m.compare(keys[std::min(i, j) - start], keys[std::max(i, j) - start])) {
        hit[i] = 1;
        break;
      }
    }
  }
}

enum class SetOp { Union, Intersection, Difference };

// Whether (key X) matches the key of some element of LIST.
bool in_list(Interp& in, const char* fn, Matcher& m, bool plain, Value x, Value list) {
  for (ListWalk walk(in, fn, 2, list); !walk.done(); walk.next()) {
    if (plain ? x.same(walk.item()) : m.compare(x, m.key(walk.item()))) return true;
  }
  return false;
}

// Results keep the order of LIST1 (then, for union, the new elements of LIST2 in order).
Value set_op(Interp& in, const char* fn, Args a, N n, SetOp op) {
  arg_list(in, fn, a, 0);
  arg_list(in, fn, a, 1);
  proper_length(in, fn, a[0], 1);
  proper_length(in, fn, a[1], 2);
  Interp::StackMark mark(in);
  Options o = parse_options(in, fn, a, 2, n, kTests);
  Matcher m(in, o, nil(), false);
  bool plain = n == 2;
  Value* slot = in.sp;
  in.push(nil());
  std::vector<Value> out;
  if (op == SetOp::Union) {
    for (Value v = a[0]; is_cons(v); v = cdr(v)) out.push_back(car(v));
    for (Value v = a[1]; is_cons(v); v = cdr(v)) {
      *slot = m.key(car(v));
      if (!in_list(in, fn, m, plain, *slot, a[0])) out.push_back(car(v));
    }
  } else {
    for (Value v = a[0]; is_cons(v); v = cdr(v)) {
      *slot = m.key(car(v));
      if (in_list(in, fn, m, plain, *slot, a[1]) == (op == SetOp::Intersection))
        out.push_back(car(v));
    }
  }
  return in.list_from(out.data(), out.size());
}

// --- search, mismatch ------------------------------------------------------------------------

// Whether element I of A matches element J of B under the options.
bool pair_matches(Matcher& m, Elements& x, std::size_t i, Elements& y, std::size_t j, Value* slot) {
  *slot = m.key(x[i]);
  return m.compare(*slot, m.key(y[j]));
}

Value search(Interp& in, const char* fn, Args a, N n) {
  Interp::StackMark mark(in);
  Options o = parse_options(in, fn, a, 2, n, kTests | kFromEnd | kStart1 | kEnd1 | kStart2 | kEnd2);
  Elements x(in, fn, a, 0), y(in, fn, a, 1);
  auto [s1, e1] = bounds(in, fn, o.start1, o.end1, x.size(), "start1", "end1");
  auto [s2, e2] = bounds(in, fn, o.start2, o.end2, y.size(), "start2", "end2");
  std::size_t len = e1 - s1;
  if (len > e2 - s2) return nil();
  if (x.is_string() && y.is_string() && n == 2) {  // plain text search
    auto pos = y.text().find(x.text());
    if (pos == std::string::npos) return nil();
    return Value::integer(static_cast<std::int64_t>(utf8_length(std::string_view(y.text()).substr(0, pos))));
  }
  Matcher m(in, o, nil(), x.is_string() || y.is_string());
  Value* slot = in.sp;
  in.push(nil());
  std::size_t tries = e2 - s2 - len + 1;
  for (std::size_t k = 0; k < tries; ++k) {
    std::size_t at = o.from_end ? e2 - len - k : s2 + k;
    if ((k & 0xfff) == 0xfff) in.check_interrupt(0x1000);
    std::size_t i = 0;
    while (i < len && pair_matches(m, x, s1 + i, y, at + i, slot)) ++i;
    if (i == len) return Value::integer(static_cast<std::int64_t>(at));
  }
  return nil();
}

// The index in SEQUENCE1 where the two first differ, or nil; with :from-end, one past the
// index where they last differ.
Value mismatch(Interp& in, const char* fn, Args a, N n) {
  Interp::StackMark mark(in);
  Options o = parse_options(in, fn, a, 2, n, kTests | kFromEnd | kStart1 | kEnd1 | kStart2 | kEnd2);
  Elements x(in, fn, a, 0), y(in, fn, a, 1);
  auto [s1, e1] = bounds(in, fn, o.start1, o.end1, x.size(), "start1", "end1");
  auto [s2, e2] = bounds(in, fn, o.start2, o.end2, y.size(), "start2", "end2");
  Matcher m(in, o, nil(), x.is_string() || y.is_string());
  Value* slot = in.sp;
  in.push(nil());
  std::size_t common = std::min(e1 - s1, e2 - s2);
  for (std::size_t k = 0; k < common; ++k) {
    bool same = o.from_end ? pair_matches(m, x, e1 - 1 - k, y, e2 - 1 - k, slot)
                           : pair_matches(m, x, s1 + k, y, s2 + k, slot);
    if (!same) return Value::integer(static_cast<std::int64_t>(o.from_end ? e1 - k : s1 + k));
  }
  if (e1 - s1 == e2 - s2) return nil();
  return Value::integer(static_cast<std::int64_t>(o.from_end ? e1 - common : s1 + common));
}

}  // namespace

void register_sequence_builtins(Interp& in) {
  TL_BUILTIN(in, "member", 2, -1, "(member ITEM LIST &key :test :test-not :key)",
             "The tail of LIST starting at the first element eql to ITEM (or satisfying :test), or nil."
             "\n  (member 3 '(1 2 3 4))  ; => (3 4)"
             "\n  (member \"b\" '(\"a\" \"b\") :test #'equal)  ; => (\"b\")"
             "\n  (member 9 '(1 2))  ; => nil",
             [](Interp& in, Args a, N n) { return member(in, "member", a, n, Mode::Item); });
  TL_BUILTIN(in, "member-if", 2, 4, "(member-if PREDICATE LIST &key :key)",
             "The tail of LIST starting at the first element satisfying PREDICATE, or nil."
             "\n  (member-if #'evenp '(1 3 4 5))  ; => (4 5)",
             [](Interp& in, Args a, N n) { return member(in, "member-if", a, n, Mode::If); });
  TL_BUILTIN(in, "member-if-not", 2, 4, "(member-if-not PREDICATE LIST &key :key)",
             "The tail of LIST starting at the first element not satisfying PREDICATE, or nil."
             "\n  (member-if-not #'oddp '(1 3 4 5))  ; => (4 5)",
             [](Interp& in, Args a, N n) { return member(in, "member-if-not", a, n, Mode::IfNot); });
  TL_BUILTIN(in, "assoc", 2, -1, "(assoc KEY ALIST &key :test :test-not :key)",
             "The first pair in ALIST whose car is eql to KEY (or satisfies :test), or nil."
             "\n  (assoc 'b '((a . 1) (b . 2)))  ; => (b . 2)"
             "\n  (cdr (assoc \"y\" '((\"x\" . 1) (\"y\" . 2)) :test #'equal))  ; => 2",
             [](Interp& in, Args a, N n) { return assoc(in, "assoc", a, n, Mode::Item, false); });
  TL_BUILTIN(in, "assoc-if", 2, 4, "(assoc-if PREDICATE ALIST &key :key)",
             "The first pair in ALIST whose car satisfies PREDICATE, or nil."
             "\n  (assoc-if #'stringp '((1 . a) (\"k\" . b)))  ; => (\"k\" . b)",
             [](Interp& in, Args a, N n) { return assoc(in, "assoc-if", a, n, Mode::If, false); });
  TL_BUILTIN(in, "assoc-if-not", 2, 4, "(assoc-if-not PREDICATE ALIST &key :key)",
             "The first pair in ALIST whose car does not satisfy PREDICATE, or nil."
             "\n  (assoc-if-not #'numberp '((1 . a) (x . b)))  ; => (x . b)",
             [](Interp& in, Args a, N n) { return assoc(in, "assoc-if-not", a, n, Mode::IfNot, false); });
  TL_BUILTIN(in, "rassoc", 2, -1, "(rassoc VALUE ALIST &key :test :test-not :key)",
             "The first pair in ALIST whose cdr is eql to VALUE (or satisfies :test), or nil."
             "\n  (rassoc 2 '((a . 1) (b . 2)))  ; => (b . 2)",
             [](Interp& in, Args a, N n) { return assoc(in, "rassoc", a, n, Mode::Item, true); });
  TL_BUILTIN(in, "rassoc-if", 2, 4, "(rassoc-if PREDICATE ALIST &key :key)",
             "The first pair in ALIST whose cdr satisfies PREDICATE, or nil."
             "\n  (rassoc-if #'evenp '((a . 1) (b . 2)))  ; => (b . 2)",
             [](Interp& in, Args a, N n) { return assoc(in, "rassoc-if", a, n, Mode::If, true); });

  TL_BUILTIN(in, "find", 2, -1, "(find ITEM SEQUENCE &key :test :test-not :key :start :end :from-end)",
             "The first element of SEQUENCE eql to ITEM (or satisfying :test), or nil; the last with "
             ":from-end."
             "\n  (find 3 '(1 2 3 4))  ; => 3"
             "\n  (find \"b\" '(\"a\" \"b\") :test #'string=)  ; => \"b\""
             "\n  (find 2 '((1 a) (2 b)) :key #'first)  ; => (2 b)",
             [](Interp& in, Args a, N n) { return scan(in, "find", a, n, Mode::Item, Scan::Find); });
  TL_BUILTIN(in, "find-if", 2, -1, "(find-if PREDICATE SEQUENCE &key :key :start :end :from-end)",
             "The first element of SEQUENCE satisfying PREDICATE, or nil."
             "\n  (find-if #'evenp '(1 2 3 4))  ; => 2"
             "\n  (find-if #'evenp '(1 2 3 4) :from-end t)  ; => 4",
             [](Interp& in, Args a, N n) { return scan(in, "find-if", a, n, Mode::If, Scan::Find); });
  TL_BUILTIN(in, "find-if-not", 2, -1, "(find-if-not PREDICATE SEQUENCE &key :key :start :end :from-end)",
             "The first element of SEQUENCE not satisfying PREDICATE, or nil."
             "\n  (find-if-not #'numberp '(1 2 x 3))  ; => x",
             [](Interp& in, Args a, N n) { return scan(in, "find-if-not", a, n, Mode::IfNot, Scan::Find); });
  TL_BUILTIN(in, "position", 2, -1, "(position ITEM SEQUENCE &key :test :test-not :key :start :end :from-end)",
             "The index of the first element of SEQUENCE eql to ITEM (or satisfying :test), or nil. The "
             "elements of a string are characters; (search PART STRING) finds a longer PART."
             "\n  (position 'c '(a b c))  ; => 2"
             "\n  (position #\\l \"hello\")  ; => 2"
             "\n  (position #\\l \"hello\" :from-end t)  ; => 3",
             [](Interp& in, Args a, N n) { return scan(in, "position", a, n, Mode::Item, Scan::Position); });
  TL_BUILTIN(in, "position-if", 2, -1, "(position-if PREDICATE SEQUENCE &key :key :start :end :from-end)",
             "The index of the first element of SEQUENCE satisfying PREDICATE, or nil."
             "\n  (position-if #'evenp '(1 3 4 6))  ; => 2",
             [](Interp& in, Args a, N n) { return scan(in, "position-if", a, n, Mode::If, Scan::Position); });
  TL_BUILTIN(in, "position-if-not", 2, -1, "(position-if-not PREDICATE SEQUENCE &key :key :start :end :from-end)",
             "The index of the first element of SEQUENCE not satisfying PREDICATE, or nil."
             "\n  (position-if-not #'alpha-char-p \"abc1\")  ; => 3",
             [](Interp& in, Args a, N n) { return scan(in, "position-if-not", a, n, Mode::IfNot, Scan::Position); });
  TL_BUILTIN(in, "count", 2, -1, "(count ITEM SEQUENCE &key :test :test-not :key :start :end :from-end)",
             "How many elements of SEQUENCE are eql to ITEM (or satisfy :test)."
             "\n  (count 1 '(1 2 1 3))  ; => 2"
             "\n  (count #\\s \"mississippi\")  ; => 4",
             [](Interp& in, Args a, N n) { return scan(in, "count", a, n, Mode::Item, Scan::Count); });
  TL_BUILTIN(in, "count-if", 2, -1, "(count-if PREDICATE SEQUENCE &key :key :start :end :from-end)",
             "How many elements of SEQUENCE satisfy PREDICATE."
             "\n  (count-if #'evenp '(1 2 3 4))  ; => 2",
             [](Interp& in, Args a, N n) { return scan(in, "count-if", a, n, Mode::If, Scan::Count); });
  TL_BUILTIN(in, "count-if-not", 2, -1, "(count-if-not PREDICATE SEQUENCE &key :key :start :end :from-end)",
             "How many elements of SEQUENCE do not satisfy PREDICATE."
             "\n  (count-if-not #'evenp '(1 2 3 4 5))  ; => 3",
             [](Interp& in, Args a, N n) { return scan(in, "count-if-not", a, n, Mode::IfNot, Scan::Count); });

  TL_BUILTIN(in, "remove", 2, -1, "(remove ITEM SEQUENCE &key :test :test-not :key :start :end :count :from-end)",
             "A new sequence without the elements eql to ITEM (or satisfying :test); :count limits how "
             "many go "
             "(the last ones with :from-end)."
             "\n  (remove 1 '(1 2 1 3))  ; => (2 3)"
             "\n  (remove 1 '(1 2 1 3) :count 1)  ; => (2 1 3)"
             "\n  (remove #\\a \"banana\")  ; => \"bnn\"",
             [](Interp& in, Args a, N n) { return edit(in, "remove", a, n, Mode::Item, Edit::Remove); });
  TL_BUILTIN(in, "remove-if", 2, -1, "(remove-if PREDICATE SEQUENCE &key :key :start :end :count :from-end)",
             "A new sequence without the elements satisfying PREDICATE."
             "\n  (remove-if #'evenp '(1 2 3 4))  ; => (1 3)",
             [](Interp& in, Args a, N n) { return edit(in, "remove-if", a, n, Mode::If, Edit::Remove); });
  TL_BUILTIN(in, "remove-if-not", 2, -1, "(remove-if-not PREDICATE SEQUENCE &key :key :start :end :count :from-end)",
             "A new sequence of the elements satisfying PREDICATE."
             "\n  (remove-if-not #'evenp '(1 2 3 4))  ; => (2 4)",
             [](Interp& in, Args a, N n) { return edit(in, "remove-if-not", a, n, Mode::IfNot, Edit::Remove); });
  TL_BUILTIN(in, "delete", 2, -1, "(delete ITEM SEQUENCE &key :test :test-not :key :start :end :count :from-end)",
             "Like remove, but may reuse the cells of a list SEQUENCE: use the result, not SEQUENCE."
             "\n  (delete 2 (list 1 2 3 2))  ; => (1 3)",
             [](Interp& in, Args a, N n) { return edit(in, "delete", a, n, Mode::Item, Edit::Delete); });
  TL_BUILTIN(in, "delete-if", 2, -1, "(delete-if PREDICATE SEQUENCE &key :key :start :end :count :from-end)",
             "Like remove-if, but may reuse the cells of a list SEQUENCE: use the result."
             "\n  (delete-if #'minusp (list 1 -2 3))  ; => (1 3)",
             [](Interp& in, Args a, N n) { return edit(in, "delete-if", a, n, Mode::If, Edit::Delete); });
  TL_BUILTIN(in, "delete-if-not", 2, -1, "(delete-if-not PREDICATE SEQUENCE &key :key :start :end :count :from-end)",
             "Like remove-if-not, but may reuse the cells of a list SEQUENCE: use the result."
             "\n  (delete-if-not #'plusp (list 1 -2 3))  ; => (1 3)",
             [](Interp& in, Args a, N n) { return edit(in, "delete-if-not", a, n, Mode::IfNot, Edit::Delete); });
  TL_BUILTIN(in, "substitute", 3, -1,
             "(substitute NEW OLD SEQUENCE &key :test :test-not :key :start :end :count :from-end)",
             "A new sequence with the elements eql to OLD (or satisfying :test) replaced by NEW."
             "\n  (substitute 0 nil '(1 nil 2 nil))  ; => (1 0 2 0)"
             "\n  (substitute #\\_ #\\Space \"a b c\")  ; => \"a_b_c\"",
             [](Interp& in, Args a, N n) { return edit(in, "substitute", a, n, Mode::Item, Edit::Substitute); });
  TL_BUILTIN(in, "substitute-if", 3, -1,
             "(substitute-if NEW PREDICATE SEQUENCE &key :key :start :end :count :from-end)",
             "A new sequence with the elements satisfying PREDICATE replaced by NEW."
             "\n  (substitute-if 0 #'minusp '(1 -2 3 -4))  ; => (1 0 3 0)",
             [](Interp& in, Args a, N n) { return edit(in, "substitute-if", a, n, Mode::If, Edit::Substitute); });
  TL_BUILTIN(in, "substitute-if-not", 3, -1,
             "(substitute-if-not NEW PREDICATE SEQUENCE &key :key :start :end :count :from-end)",
             "A new sequence with the elements not satisfying PREDICATE replaced by NEW."
             "\n  (substitute-if-not 0 #'minusp '(1 -2 3 -4))  ; => (0 -2 0 -4)",
             [](Interp& in, Args a, N n) {
               return edit(in, "substitute-if-not", a, n, Mode::IfNot, Edit::Substitute);
             });

  TL_BUILTIN(in, "remove-duplicates", 1, -1,
             "(remove-duplicates SEQUENCE &key :test :test-not :key :start :end :from-end)",
             "A new sequence without elements that a later one matches (eql by default): the last "
             "occurrence "
             "stays, or the first with :from-end t."
             "\n  (remove-duplicates '(1 2 1 3 2))  ; => (1 3 2)"
             "\n  (remove-duplicates '(1 2 1 3 2) :from-end t)  ; => (1 2 3)"
             "\n  (remove-duplicates \"hello\")  ; => \"helo\"",
             [](Interp& in, Args a, N n) { return remove_duplicates(in, "remove-duplicates", a, n, false); });
  TL_BUILTIN(in, "delete-duplicates", 1, -1,
             "(delete-duplicates SEQUENCE &key :test :test-not :key :start :end :from-end)",
             "Like remove-duplicates, but may reuse the cells of a list SEQUENCE: use the result."
             "\n  (delete-duplicates (list 'a 'b 'a))  ; => (b a)",
             [](Interp& in, Args a, N n) { return remove_duplicates(in, "delete-duplicates", a, n, true); });
  TL_BUILTIN(in, "union", 2, -1, "(union LIST1 LIST2 &key :test :test-not :key)",
             "The elements of LIST1, then those of LIST2 that match none of LIST1 (eql by default)."
             "\n  (union '(1 2 3) '(2 4))  ; => (1 2 3 4)",
             [](Interp& in, Args a, N n) { return set_op(in, "union", a, n, SetOp::Union); });
  TL_BUILTIN(in, "intersection", 2, -1, "(intersection LIST1 LIST2 &key :test :test-not :key)",
             "The elements of LIST1 that match some element of LIST2 (eql by default), in order."
             "\n  (intersection '(1 2 3 4) '(4 2))  ; => (2 4)",
             [](Interp& in, Args a, N n) { return set_op(in, "intersection", a, n, SetOp::Intersection); });
  TL_BUILTIN(in, "set-difference", 2, -1, "(set-difference LIST1 LIST2 &key :test :test-not :key)",
             "The elements of LIST1 that match no element of LIST2 (eql by default), in order."
             "\n  (set-difference '(1 2 3 4) '(2 4))  ; => (1 3)",
             [](Interp& in, Args a, N n) { return set_op(in, "set-difference", a, n, SetOp::Difference); });
  TL_BUILTIN(in, "search", 2, -1,
             "(search SEQUENCE1 SEQUENCE2 &key :test :test-not :key :start1 :end1 :start2 :end2 "
             ":from-end)",
             "The index in SEQUENCE2 where a run of elements matching SEQUENCE1 starts (the last "
             "such with "
             ":from-end), or nil."
             "\n  (search \"lo\" \"hello\")  ; => 3"
             "\n  (search '(2 3) '(1 2 3 2 3) :from-end t)  ; => 3"
             "\n  (search \"xyz\" \"hello\")  ; => nil",
             [](Interp& in, Args a, N n) { return search(in, "search", a, n); });
  TL_BUILTIN(in, "mismatch", 2, -1,
             "(mismatch SEQUENCE1 SEQUENCE2 &key :test :test-not :key :start1 :end1 :start2 :end2 "
             ":from-end)",
             "The index in SEQUENCE1 of the first element that differs from SEQUENCE2 (or where "
             "the shorter "
             "ends), or nil when they match; with :from-end, one past the last difference."
             "\n  (mismatch \"hello\" \"help\")  ; => 3"
             "\n  (mismatch '(1 2) '(1 2))  ; => nil"
             "\n  (mismatch \"abc\" \"abcde\")  ; => 3"
             "\n  (mismatch \"ab-x\" \"cd-x\" :from-end t)  ; => 2",
             [](Interp& in, Args a, N n) { return mismatch(in, "mismatch", a, n); });
}

}  // namespace tl::eval
