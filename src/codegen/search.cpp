// SPDX-License-Identifier: Apache-2.0
// The opts a search tries next (search.h).
#include "codegen/search.h"

#include <array>

namespace tl::codegen {

namespace {

struct LoopFacts {
  const Stmt* loop;
  bool innermost;    // no loop inside it
  bool updates_acc;  // an accumulator update directly in its body
  bool holds_loop;   // its body is exactly one loop
};

void collect(const std::vector<Stmt>& body, std::vector<LoopFacts>& out) {
  for (const Stmt& s : body) {
    if (s.kind != Stmt::Kind::Loop) continue;
    LoopFacts f{&s, true, false, s.body.size() == 1 && s.body[0].kind == Stmt::Kind::Loop};
    for (const Stmt& b : s.body) {
      if (b.kind == Stmt::Kind::Loop) f.innermost = false;
      if (b.kind == Stmt::Kind::AccUpdate) f.updates_acc = true;
    }
    out.push_back(f);
    collect(s.body, out);
  }
}

// The loops inside `body`, nested ones included, outermost first.
void loops_inside(const std::vector<Stmt>& body, std::vector<std::int32_t>& out) {
  for (const Stmt& s : body) {
    if (s.kind != Stmt::Kind::Loop) continue;
    out.push_back(s.var);
    loops_inside(s.body, out);
  }
}

}  // namespace

std::vector<Opt> search_actions(const Kernel& k, bool packed) {
  std::vector<LoopFacts> loops;
  collect(k.body, loops);
  std::vector<Opt> out;
  constexpr std::array<std::int64_t, 10> kFactors = {2, 3, 4, 6, 8, 16, 32, 64, 128, 256};
  for (const LoopFacts& f : loops) {
    const auto extent = k.as_const(f.loop->extent);
    if (!extent) continue;
    for (std::int64_t factor : kFactors) {
      if (factor < *extent && *extent % factor == 0) out.push_back(Opt::split(f.loop->var, factor));
    }
  }
  for (const LoopFacts& f : loops) {
    const auto extent = k.as_const(f.loop->extent);
    if (extent && *extent >= 2 && *extent <= 16 && !f.loop->parallel) out.push_back(Opt::upcast(f.loop->var));
  }
  for (const LoopFacts& f : loops) {
    if (f.holds_loop) out.push_back(Opt::swap(f.loop->var));
  }
  for (const LoopFacts& f : loops) {
    if (f.holds_loop) out.push_back(Opt::merge(f.loop->var));
  }
  for (const LoopFacts& f : loops) {
    if (!f.innermost || !f.updates_acc || f.loop->lanes) continue;
    for (std::int64_t lanes : {8, 16}) out.push_back(Opt::lanes(f.loop->var, lanes));
  }
  if (!packed) {
    std::vector<std::int32_t> all;
    loops_inside(k.body, all);
    for (std::int32_t r : all) out.push_back(Opt::pack(-1, r, {}));
    for (const LoopFacts& f : loops) {
      if (f.innermost) continue;
      std::vector<std::int32_t> inside;
      loops_inside(f.loop->body, inside);
      for (std::int32_t r : inside) out.push_back(Opt::pack(f.loop->var, r, {}));
    }
  }
  return out;
}

}  // namespace tl::codegen
