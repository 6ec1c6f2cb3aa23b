// SPDX-License-Identifier: Apache-2.0
// The buffer plan (buffer_plan.h): last readers and shared storage slots, made once per plan.
#include "runtime/buffer_plan.h"

#include <algorithm>
#include <unordered_map>

namespace tl::runtime {

BufferPlan plan_buffers(const std::vector<BufferUse>& uses, const std::vector<int>& results) {
  BufferPlan p;
  p.results = results;
  const std::size_t n = uses.size();
  auto is_result = [&](int pos) { return std::find(results.begin(), results.end(), pos) != results.end(); };
  // The last kernel reading each position; an output nothing reads goes after its own kernel.
  std::unordered_map<int, std::size_t> last;
  for (std::size_t i = 0; i < n; ++i) {
    last.emplace(uses[i].node, i);
    for (int r : uses[i].reads) last[r] = i;
  }
  p.frees.resize(n);
  for (const auto& [pos, i] : last) {
    if (!is_result(pos)) p.frees[i].push_back(pos);
  }
  for (auto& f : p.frees) std::sort(f.begin(), f.end());
  // Slots, first fit: an output takes the slot of an earlier output of its size whose last
  // reader has run.
  p.slot.assign(n, -1);
  std::vector<int> free_slots;
  for (std::size_t i = 0; i < n; ++i) {
    const BufferUse& u = uses[i];
    if (u.allocates) {
      auto fits = [&](int s) {
        const BufferPlan::Slot& slot = p.slots[static_cast<std::size_t>(s)];
        return slot.dtype == u.dtype && slot.elements == u.elements;
      };
      auto it = std::find_if(free_slots.begin(), free_slots.end(), fits);
      int s;
      if (it != free_slots.end()) {
        s = *it;
        free_slots.erase(it);
      } else {
        s = static_cast<int>(p.slots.size());
        p.slots.push_back({u.elements, u.dtype, {}});
      }
      p.slot[i] = s;
      p.slots[static_cast<std::size_t>(s)].kernels.push_back(static_cast<int>(i));
      p.slot_of[u.node] = s;
    }
    for (int pos : p.frees[i]) {
      if (auto s = p.slot_of.find(pos); s != p.slot_of.end()) free_slots.push_back(s->second);
    }
  }
  return p;
}

bool BufferPlan::reused_after(int s, std::size_t kernel) const {
  if (s < 0) return false;
  const auto& ks = slots[static_cast<std::size_t>(s)].kernels;
  return std::any_of(ks.begin(), ks.end(), [&](int k) { return k > static_cast<int>(kernel); });
}

std::size_t BufferPlan::peak_bytes(const tensor::Bindings& b, bool shared) const {
  auto bytes = [&](int s) {
    const Slot& slot = slots[static_cast<std::size_t>(s)];
    return tensor::storage_bytes(slot.dtype, static_cast<std::size_t>(slot.elements.eval(b)));
  };
  std::vector<char> open(slots.size(), 0);
  std::size_t live = 0, peak = 0;
  for (std::size_t i = 0; i < slot.size(); ++i) {
    if (const int s = slot[i]; s >= 0 && !(shared && open[static_cast<std::size_t>(s)])) {
      open[static_cast<std::size_t>(s)] = 1;
      live += bytes(s);
    }
    peak = std::max(peak, live);
    for (int pos : frees[i]) {
      auto it = slot_of.find(pos);
      if (it == slot_of.end()) continue;
      if (shared && reused_after(it->second, i)) continue;  // kept for its next output
      open[static_cast<std::size_t>(it->second)] = 0;
      live -= bytes(it->second);
    }
  }
  return peak;
}

std::string BufferPlan::str(const std::vector<BufferUse>& uses) const {
  std::string s;
  for (std::size_t i = 0; i < uses.size(); ++i) {
    s += "tensorlisp:   kernel " + std::to_string(i) + ": node " + std::to_string(uses[i].node);
    if (slot[i] >= 0) {
      const Slot& sl = slots[static_cast<std::size_t>(slot[i])];
      s += " -> buffer " + std::to_string(slot[i]) + " (" + std::string(tensor::dtype_name(sl.dtype)) + " x " +
           sl.elements.str() + ")";
    } else {
      s += " -> in place";
    }
    if (!uses[i].reads.empty()) {
      s += ", reads";
      for (int r : uses[i].reads) s += " " + std::to_string(r);
    }
    if (!frees[i].empty()) {
      s += ", then frees";
      for (int f : frees[i]) s += " " + std::to_string(f);
    }
    s += "\n";
  }
  return s;
}

}  // namespace tl::runtime
