// SPDX-License-Identifier: Apache-2.0
// A cache of the N most recently used values by key, each held by a shared pointer: the JIT
// device keeps its plans here (a graph structure's schedule, lowered and compiled), so a
// program whose shapes keep changing holds at most N plans, not one per shape it ever saw.
// Dropping a value only drops the cache's reference: a (jit f) trace that replays a plan
// keeps it alive for as long as the trace.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

namespace tl::runtime {

template <class V>
class LruCache {
 public:
  explicit LruCache(std::size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // The value under `key` (now the most recently used), or null.
  std::shared_ptr<V> find(const std::string& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  // Keeps `value` under `key` (replacing what was there) as the most recently used, dropping
  // the least recently used values past the capacity. Returns `value`.
  std::shared_ptr<V> put(std::string key, std::shared_ptr<V> value) {
    if (auto it = index_.find(key); it != index_.end()) {
      order_.erase(it->second);
      index_.erase(it);
    }
    order_.emplace_front(std::move(key), value);
    index_.emplace(order_.front().first, order_.begin());
    trim();
    return value;
  }

  std::size_t size() const { return index_.size(); }
  std::size_t capacity() const { return capacity_; }
  // How many values were dropped to keep within the capacity.
  std::uint64_t dropped() const { return dropped_; }
  // At least 1; a smaller capacity drops the least recently used values at once.
  void set_capacity(std::size_t capacity) {
    capacity_ = capacity < 1 ? 1 : capacity;
    trim();
  }
  void clear() {
    index_.clear();
    order_.clear();
  }

 private:
  using Entry = std::pair<std::string, std::shared_ptr<V>>;
  void trim() {
    while (index_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
      ++dropped_;
    }
  }
  std::size_t capacity_;
  std::uint64_t dropped_ = 0;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<std::string, typename std::list<Entry>::iterator> index_;
};

}  // namespace tl::runtime
