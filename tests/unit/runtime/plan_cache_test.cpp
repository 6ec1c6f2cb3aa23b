// SPDX-License-Identifier: Apache-2.0
// Unit tests for runtime/plan_cache.h: the N most recently used values, dropped in order of
// last use, and held by whoever still has them.
#include "runtime/plan_cache.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

using tl::runtime::LruCache;

TEST_CASE("the cache keeps the most recently used values up to its capacity", "[plan-cache]") {
  LruCache<int> c(3);
  for (int i = 0; i < 3; ++i) c.put("k" + std::to_string(i), std::make_shared<int>(i));
  REQUIRE(c.size() == 3);
  // k0 used again: k1 is now the least recently used and goes first.
  REQUIRE(*c.find("k0") == 0);
  c.put("k3", std::make_shared<int>(3));
  REQUIRE(c.size() == 3);
  REQUIRE(c.dropped() == 1);
  CHECK(c.find("k1") == nullptr);
  CHECK(*c.find("k0") == 0);
  CHECK(*c.find("k2") == 2);
  CHECK(*c.find("k3") == 3);
  CHECK(c.find("missing") == nullptr);
}

TEST_CASE("putting a key again replaces its value without dropping another", "[plan-cache]") {
  LruCache<int> c(2);
  c.put("a", std::make_shared<int>(1));
  c.put("b", std::make_shared<int>(2));
  c.put("a", std::make_shared<int>(10));
  CHECK(c.size() == 2);
  CHECK(c.dropped() == 0);
  CHECK(*c.find("a") == 10);
  CHECK(*c.find("b") == 2);
}

TEST_CASE("a dropped value lives on with those who hold it", "[plan-cache]") {
  LruCache<std::string> c(1);
  std::shared_ptr<std::string> held = c.put("a", std::make_shared<std::string>("plan a"));
  c.put("b", std::make_shared<std::string>("plan b"));
  CHECK(c.find("a") == nullptr);
  CHECK(*held == "plan a");
  CHECK(held.use_count() == 1);
}

TEST_CASE("a smaller capacity drops the least recently used at once; it is at least 1", "[plan-cache]") {
  LruCache<int> c(4);
  for (int i = 0; i < 4; ++i) c.put(std::to_string(i), std::make_shared<int>(i));
  c.find("0");
  c.set_capacity(2);
  CHECK(c.size() == 2);
  CHECK(c.dropped() == 2);
  CHECK(c.find("0") != nullptr);
  CHECK(c.find("3") != nullptr);
  c.set_capacity(0);
  CHECK(c.capacity() == 1);
  CHECK(c.size() == 1);
  CHECK(c.find("3") != nullptr);  // found last, so the most recently used
  c.clear();
  CHECK(c.size() == 0);
}
