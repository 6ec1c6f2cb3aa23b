// SPDX-License-Identifier: Apache-2.0
// The garbage-collected heap: allocation with size-class free lists, and a precise
// mark-and-sweep collector. Collection happens only at the evaluator's safe points, where every
// live value is reachable from the roots the interpreter reports.
#pragma once

#include <cstddef>
#include <functional>
#include <new>
#include <unordered_map>
#include <vector>

#include "eval/value.h"

namespace tl::eval {

// Gathers reachable objects during marking; iterative, so long lists cannot overflow the stack.
class Marker {
 public:
  // Objects in [skip_lo, skip_hi) (frames on the frame stack) are traced as roots instead.
  Marker(const void* skip_lo, const void* skip_hi)
      : lo_(static_cast<const char*>(skip_lo)), hi_(static_cast<const char*>(skip_hi)) {}
  void mark(Value v) {
    if (v.tag == Tag::Obj) mark(v.o);
  }
  void mark(Obj* o) {
    auto* p = reinterpret_cast<const char*>(o);
    if (p >= lo_ && p < hi_) return;
    if (o != nullptr && !(o->marked & kGcMark)) {
      o->marked |= kGcMark;
      work_.push_back(o);
    }
  }
  std::vector<Obj*>& work() { return work_; }

 private:
  const char* lo_;
  const char* hi_;
  std::vector<Obj*> work_;
};

struct HeapStats {
  std::size_t objects = 0;      // live after the last collection + allocated since
  std::size_t bytes = 0;        // bytes held by objects
  std::size_t collections = 0;
  std::size_t total_allocated = 0;
  std::size_t held = 0;  // memory outside the heap the live objects held at the last collection
};

class Heap {
 public:
  Heap();
  ~Heap();
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;

  // Allocates and constructs a T (a subclass of Obj) of the given kind.
  template <class T>
  T* make(ObjKind kind) {
    void* mem = allocate(sizeof(T));
    T* obj = new (mem) T();
    link(obj, kind, sizeof(T));
    return obj;
  }
  Env* make_env(Env* parent, std::uint32_t size);
  Cons* make_cons(Value car, Value cdr) {
    Cons* c = make<Cons>(ObjKind::Cons);
    c->car = car;
    c->cdr = cdr;
    return c;
  }
  // A cons with room for its source spans (the reader's); set_span and set_form_span on any
  // other cons keep the span in a table.
  Cons* make_spanned_cons(Value car, Value cdr) {
    SpannedCons* c = make<SpannedCons>(ObjKind::Cons);
    c->flags = kObjSpansInline;
    c->car = car;
    c->cdr = cdr;
    return c;
  }

  // True when enough has been allocated since the last collection to make one worthwhile.
  bool wants_collection() const { return bytes_since_gc_ >= threshold_ || external_since_gc_ >= external_threshold_; }
  // Counts memory that heap objects own outside the heap (tensor data, graph nodes) toward the
  // next collection, and on a threshold of its own: a loop whose Lisp garbage is small but
  // holds tensors (a jit replay's results) collects every 2 MiB of them, so its resident
  // memory stays flat (issue 19); or every quarter of the live heap, or every eighth
  // of the memory outside the heap that live objects held at the last collection (a model's
  // weights), when larger: a GPT-2 124M's decode, its 130 MB of 4-bit weights live, collected
  // every 1.25 tokens (each collection 0.5-2 ms of a 10 ms token), every 30 now. (At half a
  // megabyte, eager ops collected every 500 or so: (add x 1.0) took 3.9 us, 3.0 at 2 MiB.)
  void account_external(std::size_t bytes) {
    bytes_since_gc_ += bytes;
    external_since_gc_ += bytes;
  }
  // Counts the contents of a new string, vector or hash table (held outside the object) toward
  // the limit and the next collection; collections count them again for the survivors.
  void account_payload(std::size_t bytes) {
    if (limit_ != 0 && bytes_ + bytes > limit_) over_limit(bytes);
    bytes_ += bytes;
    bytes_since_gc_ += bytes;
  }
  // Stress mode for testing: collect whenever `bytes` have been allocated since the last
  // collection (TENSORLISP_GC_STRESS=BYTES; 1 collects at every safe point). 0 turns it off.
  void set_stress(std::size_t bytes) {
    stress_ = bytes;
    threshold_ = bytes > 0 ? bytes - 1 : kMinThreshold;
  }
  // Allocation fails with std::bad_alloc (a storage-error in Lisp) once the heap's objects
  // would hold more than `bytes`; 0 means no limit. Garbage counts until it is collected. After
  // a failure a reserve of an eighth more is lent until a collection (which the failure asks
  // for) finds room again, so the handler of the storage-error has room to run.
  void set_limit(std::size_t bytes) {
    limit_ = bytes;
    reserve_ = bytes / 8;
  }
  std::size_t limit() const { return limit_; }
  // Lends the reserve as a failed allocation would: for a storage-error raised because a
  // request would not fit (Interp::check_allocation), whose handler needs room too.
  void lend_reserve() {
    in_reserve_ = true;
    bytes_since_gc_ = threshold_;  // collect at the next safe point
  }
  // Marks from the roots that `mark_roots` reports, then frees everything unmarked.
  void collect(const std::function<void(Marker&)>& mark_roots, const void* skip_lo = nullptr,
               const void* skip_hi = nullptr);

  // Source spans of conses made by the reader. A cell's span is that of its car (so atoms in a
  // list have locations); a list's form span covers the whole list, and survives macros that
  // copy the cells around it. A SpannedCons holds its own; other objects' are in a table.
  void set_span(Obj* obj, Span span);
  Span span_of(Value v) const;
  void set_form_span(Obj* obj, Span span);
  Span form_span_of(Value v) const;

  HeapStats stats() const;

 private:
  void* allocate(std::size_t bytes);
  // Throws std::bad_alloc, unless the reserve lent after the last failure covers `bytes`.
  [[gnu::cold]] void over_limit(std::size_t bytes);
  void release(Obj* obj);
  void link(Obj* obj, ObjKind kind, std::size_t size) {
    obj->kind = kind;
    obj->alloc_size = static_cast<std::uint32_t>(size);
    obj->next = all_;
    all_ = obj;
    bytes_ += size;
    bytes_since_gc_ += size;
    ++objects_;
    total_allocated_ += size;
  }
  static void trace(Obj* obj, Marker& marker);
  static std::size_t payload_bytes(const Obj* obj);
 public:
  // Bytes of an Env with `size` slots.
  static std::size_t env_bytes(std::uint32_t size) {
    return sizeof(Env) + (size > 0 ? size - 1 : 0) * sizeof(Value);
  }
 private:
  static void destroy(Obj* obj);

  void refill(std::size_t cls);

  static constexpr std::size_t kMinThreshold = 8u << 20;
  static constexpr std::size_t kGranule = 16;
  static constexpr std::size_t kClasses = 17;  // pooled sizes up to 256 bytes
  static constexpr std::size_t kChunkBytes = 64u << 10;
  std::vector<void*> free_lists_;
  std::vector<void*> chunks_;  // memory of the pooled size classes, freed with the heap
  Obj* all_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t objects_ = 0;
  std::size_t bytes_since_gc_ = 0;
  std::size_t external_since_gc_ = 0;
  std::size_t held_ = 0;
  static constexpr std::size_t kMinExternalThreshold = 2u << 20;
  std::size_t external_threshold_ = kMinExternalThreshold;
  std::size_t threshold_;
  std::size_t stress_ = 0;
  std::size_t limit_ = 0;
  std::size_t reserve_ = 0;
  bool in_reserve_ = false;  // the limit was hit and no collection has found room since
  std::size_t collections_ = 0;
  std::size_t total_allocated_ = 0;
  std::unordered_map<const Obj*, Span> spans_;
  std::unordered_map<const Obj*, Span> form_spans_;
};

}  // namespace tl::eval
