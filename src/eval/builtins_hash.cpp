// SPDX-License-Identifier: Apache-2.0
// Hash tables: insertion-ordered entries with an open-addressing index, tests eq, eql, equal.
#include "eval/builtins.h"

namespace tl::eval {

namespace {

using Args = Value*;
using N = std::uint32_t;

bool keys_match(HashTest test, Value a, Value b) {
  return test == HashTest::Equal ? equal(a, b) : eql(a, b);
}

void rebuild(HashTable* h) {
  // Compact removed entries, then index every entry in a table at most half full.
  std::size_t out = 0;
  for (std::size_t i = 0; i < h->entries.size(); ++i) {
    if (h->entries[i].first.tag == Tag::Obj && h->entries[i].first.o == nullptr) continue;
    h->entries[out++] = h->entries[i];
  }
  h->entries.resize(out);
  std::size_t cap = 16;
  while (cap < h->entries.size() * 2 + 2) cap *= 2;
  h->buckets.assign(cap, -1);
  for (std::size_t i = 0; i < h->entries.size(); ++i) {
    std::size_t slot = hash_value(h->entries[i].first, h->test) & (cap - 1);
    while (h->buckets[slot] >= 0) slot = (slot + 1) & (cap - 1);
    h->buckets[slot] = static_cast<std::int32_t>(i);
  }
}

// A removed entry's key is an Obj-tagged null pointer (never a real value).
Value tombstone() {
  Value v;
  v.tag = Tag::Obj;
  v.o = nullptr;
  return v;
}

}  // namespace

Value* hash_find(HashTable* h, Value key) {
  if (h->buckets.empty()) return nullptr;
  std::size_t mask = h->buckets.size() - 1;
  std::size_t slot = hash_value(key, h->test) & mask;
  while (h->buckets[slot] >= 0) {
    auto& entry = h->entries[static_cast<std::size_t>(h->buckets[slot])];
    if (!(entry.first.tag == Tag::Obj && entry.first.o == nullptr) && keys_match(h->test, entry.first, key)) {
      return &entry.second;
    }
    slot = (slot + 1) & mask;
  }
  return nullptr;
}

void hash_put(HashTable* h, Value key, Value value) {
  if (Value* v = hash_find(h, key)) {
    *v = value;
    return;
  }
  h->entries.emplace_back(key, value);
  ++h->live;
  if (h->buckets.empty() || h->entries.size() * 2 + 2 > h->buckets.size()) {
    rebuild(h);
    return;
  }
  std::size_t mask = h->buckets.size() - 1;
  std::size_t slot = hash_value(key, h->test) & mask;
  while (h->buckets[slot] >= 0) slot = (slot + 1) & mask;
  h->buckets[slot] = static_cast<std::int32_t>(h->entries.size() - 1);
}

bool hash_remove(HashTable* h, Value key) {
  Value* v = hash_find(h, key);
  if (v == nullptr) return false;
  auto index = static_cast<std::size_t>(reinterpret_cast<char*>(v) - reinterpret_cast<char*>(h->entries.data())) /
               sizeof(h->entries[0]);
  auto* entry = &h->entries[index];
  entry->first = tombstone();
  entry->second = nil();
  --h->live;
  if (h->live * 4 < h->entries.size()) rebuild(h);
  return true;
}

void register_hash_builtins(Interp& in) {
  TL_BUILTIN(in, "make-hash-table", 0, -1, "(make-hash-table &key :test :size :rehash-size :rehash-threshold)",
             "A new empty hash table. :test is 'equal (default: strings and lists by contents), 'eql or 'eq; "
             ":size (a non-negative integer) and the rehash settings are accepted, as Common Lisp's are, "
             "and the table grows by itself.\n"
             "  (let ((h (make-hash-table))) (setf (gethash '(1 2) h) 'pair) (gethash (list 1 2) h))  ; => pair\n"
             "  (let ((h (make-hash-table :test 'eq))) (setf (gethash (list 1) h) 1) (gethash (list 1) h))  ; => nil\n"
             "  (hash-table-count (make-hash-table :test #'eql :size 100))  ; => 0",
             [](Interp& in, Args a, N n) -> Value {
               HashTest test = HashTest::Equal;
               Value t = keyword_arg(a, 0, n, "test");
               if (is_kind(t, ObjKind::Native)) t = in.sym(as_native(t)->name);
               if (is_symbol(t)) {
                 const std::string& name = as_symbol(t)->name;
                 if (name == "eq") test = HashTest::Eq;
                 else if (name == "eql") test = HashTest::Eql;
                 else if (name != "equal")
                   in.error("type-error", "make-hash-table: :test must be eq, eql or equal, got " + name);
               } else if (!t.is_nil()) {
                 in.error("type-error", "make-hash-table: :test must be eq, eql or equal, got " + in.repr(t));
               }
               if (n % 2 != 0) in.error("program-error", "make-hash-table: keyword arguments must come in pairs");
               for (N i = 0; i < n; i += 2) {
                 const std::string key = is_symbol(a[i]) && as_symbol(a[i])->is_keyword() ? as_symbol(a[i])->name : "";
                 if (key == "size" && !(a[i + 1].is_int() && a[i + 1].i >= 0)) {
                   in.type_error("make-hash-table", static_cast<int>(i) + 2, "a non-negative integer (:size)",
                                 a[i + 1]);
                 }
                 if (key != "test" && key != "size" && key != "rehash-size" && key != "rehash-threshold" &&
                     key != "weakness" && key != "synchronized") {
                   in.error("program-error", "make-hash-table: unknown keyword argument " + in.repr(a[i]) +
                                                 " (known: :test :size :rehash-size :rehash-threshold)");
                 }
               }
               return in.make_hash(test);
             });
  TL_BUILTIN(in, "gethash", 2, 3, "(gethash KEY TABLE [DEFAULT])",
             "The value stored under KEY, or DEFAULT (nil); the second value is true when KEY was found.\n"
             "  (let ((h (make-hash-table))) (setf (gethash \"k\" h) 1) (gethash \"k\" h))  ; => 1\n"
             "  (multiple-value-list (gethash 'missing (make-hash-table) 0))  ; => (0 nil)",
             [](Interp& in, Args a, N n) -> Value {
               Value* v = hash_find(arg_hash(in, "gethash", a, 1), a[0]);
               if (v != nullptr) return in.two_values(*v, in.t());
               return in.two_values(n == 3 ? a[2] : nil(), nil());
             });
  TL_BUILTIN(in, "puthash", 3, 3, "(puthash KEY VALUE TABLE)",
             "Stores VALUE under KEY; returns VALUE. (setf (gethash k h) v) expands to it.\n"
             "  (let ((h (make-hash-table))) (puthash :lr 0.1 h) (gethash :lr h))  ; => 0.1",
             [](Interp& in, Args a, N) -> Value {
               hash_put(arg_hash(in, "puthash", a, 2), a[0], a[1]);
               return a[1];
             });
  TL_BUILTIN(in, "remhash", 2, 2, "(remhash KEY TABLE)",
             "Removes KEY; true if it was there.\n"
             "  (let ((h (make-hash-table))) (puthash 'a 1 h) (list (remhash 'a h) (remhash 'a h)))  ; => (t nil)",
             [](Interp& in, Args a, N) { return in.boolean(hash_remove(arg_hash(in, "remhash", a, 1), a[0])); });
  TL_BUILTIN(in, "clrhash", 1, 1, "(clrhash TABLE)",
             "Removes every entry; returns TABLE.\n"
             "  (let ((h (make-hash-table))) (puthash 'a 1 h) (clrhash h) (hash-table-count h))  ; => 0",
             [](Interp& in, Args a, N) -> Value {
               HashTable* h = arg_hash(in, "clrhash", a, 0);
               h->entries.clear();
               h->buckets.clear();
               h->live = 0;
               return a[0];
             });
  TL_BUILTIN(in, "hash-table-contains-p", 2, 2, "(hash-table-contains-p KEY TABLE)",
             "True when TABLE has an entry for KEY.\n"
             "  (let ((h (make-hash-table))) (setf (gethash 'x h) nil) (hash-table-contains-p 'x h))  ; => t\n"
             "  (hash-table-contains-p 'y (make-hash-table))  ; => nil",
             [](Interp& in, Args a, N) {
               return in.boolean(hash_find(arg_hash(in, "hash-table-contains-p", a, 1), a[0]) != nullptr);
             });
  TL_BUILTIN(in, "hash-table-count", 1, 1, "(hash-table-count TABLE)",
             "Number of entries.\n"
             "  (let ((h (make-hash-table))) (setf (gethash 'a h) 1 (gethash 'b h) 2) (hash-table-count h))  ; => 2",
             [](Interp& in, Args a, N) {
               return Value::integer(static_cast<std::int64_t>(arg_hash(in, "hash-table-count", a, 0)->live));
             });
  TL_BUILTIN(in, "hash-table-keys", 1, 1, "(hash-table-keys TABLE)",
             "The keys, in insertion order.\n"
             "  (let ((h (make-hash-table))) (setf (gethash 'b h) 1 (gethash 'a h) 2) (hash-table-keys h))  ; => (b a)",
             [](Interp& in, Args a, N) -> Value {
               HashTable* h = arg_hash(in, "hash-table-keys", a, 0);
               std::vector<Value> keys;
               for (auto& [k, v] : h->entries)
                 if (!(k.tag == Tag::Obj && k.o == nullptr)) keys.push_back(k);
               return in.list_from(keys.data(), keys.size());
             });
  TL_BUILTIN(in, "hash-table-values", 1, 1, "(hash-table-values TABLE)",
             "The values, in insertion order of their keys.\n"
             "  (let ((h (make-hash-table))) (setf (gethash 'b h) 1 (gethash 'a h) 2)\n"
             "    (hash-table-values h))  ; => (1 2)",
             [](Interp& in, Args a, N) -> Value {
               HashTable* h = arg_hash(in, "hash-table-values", a, 0);
               std::vector<Value> vals;
               for (auto& [k, v] : h->entries)
                 if (!(k.tag == Tag::Obj && k.o == nullptr)) vals.push_back(v);
               return in.list_from(vals.data(), vals.size());
             });
  TL_BUILTIN(in, "maphash", 2, 2, "(maphash FUNCTION TABLE)",
             "Calls (FUNCTION key value) for each entry, in insertion order.\n"
             "  (let ((h (make-hash-table)) (sum 0)) (setf (gethash 'a h) 1 (gethash 'b h) 2)\n"
             "    (maphash (lambda (k v) (incf sum v)) h) sum)  ; => 3",
             [](Interp& in, Args a, N) -> Value {
               arg_function(in, "maphash", a, 0);
               HashTable* h = arg_hash(in, "maphash", a, 1);
               // Snapshot so FUNCTION may modify the table; the snapshot is rooted on the stack.
               Interp::StackMark mark(in);
               Value* base = in.sp;
               for (auto& [k, v] : h->entries) {
                 if (k.tag == Tag::Obj && k.o == nullptr) continue;
                 in.push(k);
                 in.push(v);
               }
               Value* end = in.sp;
               for (Value* p = base; p < end; p += 2) in.apply(a[0], p, 2);
               return nil();
             });
}

}  // namespace tl::eval
