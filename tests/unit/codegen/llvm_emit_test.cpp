// SPDX-License-Identifier: Apache-2.0
// Unit tests for codegen/llvm_emit.cpp: the emitter build stamp in every target_id, and the
// targets make_codegen knows.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "codegen/llvm_emit.h"

TEST_CASE("llvm emit: the build stamp is the latest of the emitter's files", "[codegen]") {
  // A target file built later than the shared files gives its own stamp; one built earlier,
  // theirs (so a change to the shared emitter makes every target's cached code stale).
  CHECK(tl::codegen::emitter_build("Dec 31 2999 23:59:59") == "Dec 31 2999 23:59:59");
  CHECK(tl::codegen::emitter_build("Jan  1 1970 00:00:00") != "Jan  1 1970 00:00:00");
  CHECK(tl::codegen::emitter_build("Jan  1 1970 00:00:00") == tl::codegen::emitter_build("Feb  2 1971 00:00:00"));
}

TEST_CASE("llvm emit: make_codegen knows its targets", "[codegen]") {
  const tl::codegen::Toolchain none{};
  CHECK(tl::codegen::make_codegen("sim:amdgcn", none)->target_id().rfind("sim/amdgcn/", 0) == 0);
  CHECK(tl::codegen::make_codegen("nvptx:sm_70", none)->target_id().rfind("nvptx64/sm_70/", 0) == 0);
  CHECK_THROWS_AS(tl::codegen::make_codegen("tpu", none), std::runtime_error);
  CHECK_THROWS_AS(tl::codegen::make_codegen("sim:tpu", none), std::runtime_error);
}
