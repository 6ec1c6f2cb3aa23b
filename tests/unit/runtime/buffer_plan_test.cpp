// SPDX-License-Identifier: Apache-2.0
// Unit tests for runtime/buffer_plan.h: last readers, shared slots and peak bytes.
#include <catch2/catch.hpp>

#include <vector>

#include "runtime/buffer_plan.h"

using tl::runtime::BufferUse;
using tl::runtime::plan_buffers;
using tl::tensor::Dim;
using tl::tensor::DType;

namespace {

BufferUse use(int node, std::vector<int> reads, std::int64_t elements, DType t = DType::F32) {
  BufferUse u;
  u.node = node;
  u.reads = std::move(reads);
  u.elements = Dim(elements);
  u.dtype = t;
  return u;
}

}  // namespace

TEST_CASE("a chain frees each buffer after its reader and reuses its storage", "[buffer-plan]") {
  // leaf 0 -> 1 -> 2 -> 3 (the result)
  std::vector<BufferUse> uses = {use(1, {0}, 100), use(2, {1}, 100), use(3, {2}, 100)};
  auto p = plan_buffers(uses, {3});
  CHECK(p.frees[0] == std::vector<int>{0});
  CHECK(p.frees[1] == std::vector<int>{1});
  CHECK(p.frees[2] == std::vector<int>{2});
  CHECK(p.slot == std::vector<int>{0, 1, 0});  // 3 takes 1's storage: 1 was last read by kernel 1
  CHECK(p.slots.size() == 2);
  CHECK(p.reused_after(0, 0));
  CHECK(!p.reused_after(0, 2));
  CHECK(p.peak_bytes({}) == 800);
  CHECK(p.peak_bytes({}, false) == 800);
}

TEST_CASE("results, other sizes and other dtypes keep their own storage", "[buffer-plan]") {
  // 1 and 2 from leaf 0; 3 reads both; 4 reads 3. 1 is a result.
  std::vector<BufferUse> uses = {use(1, {0}, 10), use(2, {0}, 10), use(3, {1, 2}, 20), use(4, {3}, 10, DType::I32),
                                 use(5, {3}, 10)};
  auto p = plan_buffers(uses, {1, 4, 5});
  CHECK(p.frees[2] == std::vector<int>{2});  // not 1: a result
  CHECK(p.slot[3] == 3);                      // i32: not the f32 slot 2 left
  CHECK(p.slot[4] == 1);                      // f32 x 10: 2's slot
  CHECK(p.slots.size() == 4);
  // 1, 2 and 3 (40 + 40 + 80) live at kernel 2; 2's slot waits for 5 while 4 (40) is made.
  CHECK(p.peak_bytes({}) == 200);
  CHECK(p.peak_bytes({}, false) == 200);
}

TEST_CASE("writes into another buffer allocate nothing; outputs nothing reads go at once", "[buffer-plan]") {
  BufferUse in_place = use(2, {0, 1}, 50);
  in_place.allocates = false;
  std::vector<BufferUse> uses = {use(1, {0}, 50), in_place, use(3, {0}, 50)};
  auto p = plan_buffers(uses, {2});
  CHECK(p.slot[1] == -1);
  CHECK(p.frees[1] == std::vector<int>{1});  // 1's last reader
  CHECK(p.frees[2] == std::vector<int>{0, 3});  // 3 is read by nothing and no result
  CHECK(p.slot[2] == 0);
  CHECK(p.peak_bytes({}) == 200);
}

TEST_CASE("symbolic sizes are evaluated with the run's bindings", "[buffer-plan]") {
  std::vector<BufferUse> uses = {use(1, {0}, 1), use(2, {1}, 1)};
  uses[0].elements = Dim::var("n") * Dim(4);
  uses[1].elements = Dim::var("n") * Dim(4);
  auto p = plan_buffers(uses, {2});
  CHECK(p.peak_bytes({{"n", 10}}) == 320);
  CHECK(p.slots.size() == 2);
}
