// SPDX-License-Identifier: Apache-2.0
// Allocation and mark-and-sweep collection.
#include "eval/heap.h"

#include <algorithm>
#include <cstdlib>
#include <unordered_set>

#include "eval/node.h"

namespace tl::eval {

CodeUnit::~CodeUnit() {
  for (Node* n : nodes) delete n;
}

Heap::Heap() : free_lists_(kClasses, nullptr), threshold_(kMinThreshold) {}

Heap::~Heap() {
  Obj* o = all_;
  while (o != nullptr) {
    Obj* next = o->next;
    release(o);
    o = next;
  }
  for (void* chunk : chunks_) std::free(chunk);
}

void Heap::refill(std::size_t cls) {
  // Carve a chunk into objects of this size class; they are never returned to malloc.
  void* chunk = std::malloc(kChunkBytes);
  if (chunk == nullptr) throw std::bad_alloc();
  chunks_.push_back(chunk);
  std::size_t size = cls * kGranule;
  char* base = static_cast<char*>(chunk);
  for (std::size_t off = 0; off + size <= kChunkBytes; off += size) {
    *reinterpret_cast<void**>(base + off) = free_lists_[cls];
    free_lists_[cls] = base + off;
  }
}

void Heap::over_limit(std::size_t bytes) {
  if (in_reserve_ && bytes_ + bytes <= limit_ + reserve_) return;
  in_reserve_ = true;
  bytes_since_gc_ = threshold_;  // collect at the next safe point
  throw std::bad_alloc();
}

void* Heap::allocate(std::size_t bytes) {
  if (limit_ != 0 && bytes_ + bytes > limit_) over_limit(bytes);
#ifndef TL_SANITIZE
  std::size_t cls = (bytes + kGranule - 1) / kGranule;
  if (cls < kClasses) {
    if (free_lists_[cls] == nullptr) refill(cls);
    void* mem = free_lists_[cls];
    free_lists_[cls] = *static_cast<void**>(mem);
    return mem;
  }
#endif
  void* mem = std::malloc(bytes);
  if (mem == nullptr) throw std::bad_alloc();
  return mem;
}

Env* Heap::make_env(Env* parent, std::uint32_t size) {
  std::size_t bytes = env_bytes(size);
  void* mem = allocate(bytes);
  Env* env = new (mem) Env();
  env->parent = parent;
  env->size = size;
  for (std::uint32_t i = 0; i < size; ++i) new (&env->slots[i]) Value();
  link(env, ObjKind::Env, bytes);
  return env;
}

void Heap::destroy(Obj* obj) {
  switch (obj->kind) {
    case ObjKind::Cons: static_cast<Cons*>(obj)->~Cons(); break;
    case ObjKind::Symbol: static_cast<Symbol*>(obj)->~Symbol(); break;
    case ObjKind::String: static_cast<String*>(obj)->~String(); break;
    case ObjKind::Vector: static_cast<Vector*>(obj)->~Vector(); break;
    case ObjKind::HashTable: static_cast<HashTable*>(obj)->~HashTable(); break;
    case ObjKind::Closure: static_cast<Closure*>(obj)->~Closure(); break;
    case ObjKind::Native: static_cast<Native*>(obj)->~Native(); break;
    case ObjKind::Macro: static_cast<Macro*>(obj)->~Macro(); break;
    case ObjKind::Env: static_cast<Env*>(obj)->~Env(); break;
    case ObjKind::Code: static_cast<CodeUnit*>(obj)->~CodeUnit(); break;
    case ObjKind::Condition: static_cast<Condition*>(obj)->~Condition(); break;
    case ObjKind::Foreign: static_cast<Foreign*>(obj)->~Foreign(); break;
    case ObjKind::Struct: static_cast<Instance*>(obj)->~Instance(); break;
  }
}

void Heap::release(Obj* obj_header) {
  std::size_t size = obj_header->alloc_size;
  // A Foreign object is polymorphic: its vtable pointer precedes the Obj header, so the
  // allocation starts at the most-derived object, not at the header.
  Obj* obj = obj_header->kind == ObjKind::Foreign
                 ? static_cast<Obj*>(dynamic_cast<void*>(static_cast<Foreign*>(obj_header)))
                 : obj_header;
  destroy(obj_header);
#ifndef TL_SANITIZE
  std::size_t cls = (size + kGranule - 1) / kGranule;
  if (cls < kClasses) {
    *reinterpret_cast<void**>(obj) = free_lists_[cls];
    free_lists_[cls] = obj;
    return;
  }
#else
  (void)size;
#endif
  std::free(obj);
}

void Heap::trace(Obj* obj, Marker& m) {
  switch (obj->kind) {
    case ObjKind::Cons: {
      // Lists are long in the cdr direction; the caller loops over cdrs (see collect).
      auto* c = static_cast<Cons*>(obj);
      m.mark(c->car);
      m.mark(c->cdr);
      break;
    }
    case ObjKind::Symbol: {
      auto* s = static_cast<Symbol*>(obj);
      m.mark(s->value);
      m.mark(s->doc);
      break;
    }
    case ObjKind::String: break;
    case ObjKind::Vector:
      for (const Value& v : static_cast<Vector*>(obj)->items) m.mark(v);
      break;
    case ObjKind::Struct: {
      auto* instance = static_cast<Instance*>(obj);
      m.mark(instance->type);
      for (const Value& v : instance->slots) m.mark(v);
      break;
    }
    case ObjKind::HashTable:
      for (const auto& [k, v] : static_cast<HashTable*>(obj)->entries) {
        m.mark(k);
        m.mark(v);
      }
      break;
    case ObjKind::Closure: {
      auto* c = static_cast<Closure*>(obj);
      m.mark(c->env);
      m.mark(c->code);
      m.mark(c->name);
      break;
    }
    case ObjKind::Native: break;
    case ObjKind::Macro: {
      auto* mac = static_cast<Macro*>(obj);
      m.mark(mac->fn);
      m.mark(mac->name);
      break;
    }
    case ObjKind::Env: {
      auto* e = static_cast<Env*>(obj);
      m.mark(e->parent);
      for (std::uint32_t i = 0; i < e->size; ++i) m.mark(e->slots[i]);
      break;
    }
    case ObjKind::Code:
      for (const Value& v : static_cast<CodeUnit*>(obj)->constants) m.mark(v);
      break;
    case ObjKind::Condition: {
      auto* c = static_cast<Condition*>(obj);
      m.mark(c->type);
      m.mark(c->message);
      m.mark(c->data);
      m.mark(c->slots);
      break;
    }
    case ObjKind::Foreign:
      static_cast<Foreign*>(obj)->trace([&m](Value v) { m.mark(v); });
      break;
  }
}

std::size_t Heap::payload_bytes(const Obj* obj) {
  switch (obj->kind) {
    case ObjKind::String: return static_cast<const String*>(obj)->text.capacity();
    case ObjKind::Vector: return static_cast<const Vector*>(obj)->items.capacity() * sizeof(Value);
    case ObjKind::Struct: return static_cast<const Instance*>(obj)->slots.capacity() * sizeof(Value);
    case ObjKind::HashTable: {
      auto* h = static_cast<const HashTable*>(obj);
      return h->entries.capacity() * sizeof(h->entries[0]) + h->buckets.capacity() * sizeof(std::int32_t);
    }
    default: return 0;
  }
}

void Heap::collect(const std::function<void(Marker&)>& mark_roots, const void* skip_lo,
                   const void* skip_hi) {
  Marker marker(skip_lo, skip_hi);
  mark_roots(marker);
  auto& work = marker.work();
  while (!work.empty()) {
    Obj* o = work.back();
    work.pop_back();
    trace(o, marker);
  }
  // Sweep: unlink and free every unmarked object, clear marks on the survivors.
  Obj** link_ptr = &all_;
  std::size_t live_bytes = 0;
  std::size_t live_objects = 0;
  std::size_t held = 0;
  std::unordered_set<const void*> held_ids;
  while (Obj* o = *link_ptr) {
    if (o->marked & kGcMark) {
      o->marked &= static_cast<std::uint8_t>(~kGcMark);
      live_bytes += o->alloc_size + payload_bytes(o);
      ++live_objects;
      if (o->kind == ObjKind::Foreign) {
        auto [id, size] = static_cast<const Foreign*>(o)->held_memory();
        if (id != nullptr && held_ids.insert(id).second) held += size;
      }
      link_ptr = &o->next;
    } else {
      *link_ptr = o->next;
      if (!(o->flags & kObjSpansInline)) {
        if (o->flags & kObjHasSpan) spans_.erase(o);
        if (o->flags & kObjHasFormSpan) form_spans_.erase(o);
      }
      release(o);
    }
  }
  bytes_ = live_bytes;
  objects_ = live_objects;
  bytes_since_gc_ = 0;
  external_since_gc_ = 0;
  held_ = held;
  external_threshold_ = std::max({kMinExternalThreshold, live_bytes / 4, held / 8});
  // The reserve lent after a failure lasts until a collection finds room again: one made
  // while the failed computation is still on the stack (unwinding to its handler) frees
  // little, and taking the reserve back then would fail the handler itself.
  if (limit_ == 0 || live_bytes < limit_ - limit_ / 16) in_reserve_ = false;
  threshold_ = stress_ > 0 ? stress_ - 1 : (live_bytes > kMinThreshold ? live_bytes : kMinThreshold);
  // Under a memory limit, the next collection comes when half the room left is used, so a
  // safe point collects before an allocation meets the limit with garbage still counted. But
  // never before a sixteenth of the limit is allocated: with the live data near the limit,
  // collecting ever more often (each one tracing everything live) would make every later
  // allocation slower without freeing anything; the heap is full, and the next request that
  // does not fit is refused (a storage-error) instead.
  if (limit_ != 0 && stress_ == 0) {
    const std::size_t room = limit_ > live_bytes ? limit_ - live_bytes : 0;
    threshold_ = std::min(threshold_, std::max<std::size_t>({room / 2, limit_ / 16, kGranule}));
  }
  ++collections_;
}

void Heap::set_span(Obj* obj, Span span) {
  obj->flags |= kObjHasSpan;
  if (obj->flags & kObjSpansInline) static_cast<SpannedCons*>(obj)->span = span;
  else spans_[obj] = span;
}

Span Heap::span_of(Value v) const {
  if (v.tag != Tag::Obj || !(v.o->flags & kObjHasSpan)) return Span{};
  if (v.o->flags & kObjSpansInline) return static_cast<const SpannedCons*>(v.o)->span;
  auto it = spans_.find(v.o);
  return it == spans_.end() ? Span{} : it->second;
}

void Heap::set_form_span(Obj* obj, Span span) {
  obj->flags |= kObjHasFormSpan;
  if (obj->flags & kObjSpansInline) static_cast<SpannedCons*>(obj)->form_span = span;
  else form_spans_[obj] = span;
}

Span Heap::form_span_of(Value v) const {
  if (v.tag != Tag::Obj || !(v.o->flags & kObjHasFormSpan)) return Span{};
  if (v.o->flags & kObjSpansInline) return static_cast<const SpannedCons*>(v.o)->form_span;
  auto it = form_spans_.find(v.o);
  return it == form_spans_.end() ? Span{} : it->second;
}

HeapStats Heap::stats() const { return HeapStats{objects_, bytes_, collections_, total_allocated_, held_}; }

}  // namespace tl::eval
