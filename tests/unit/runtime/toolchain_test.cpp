// SPDX-License-Identifier: Apache-2.0
// Unit tests for runtime/toolchain.h: where libdevice and ld.lld are looked for, as the host's
// settings say (the runtime reads no environment variable), and that the toolchain handed to
// codegen (codegen::Toolchain) carries them.
#include <catch2/catch.hpp>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "runtime/toolchain.h"

namespace {

// A fresh temporary folder, removed at the end of the test.
struct TempDir {
  explicit TempDir(const std::string& name) : path(std::filesystem::temp_directory_path() / name) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::filesystem::path path;
};

}  // namespace

TEST_CASE("toolchain: libdevice is found under the first CUDA folder that has it", "[runtime][toolchain]") {
  TempDir first("tl-toolchain-test-cuda-home"), second("tl-toolchain-test-cuda-path");
  tl::runtime::ToolchainSettings settings;
  settings.cuda_dirs = {"", first.path.string(), second.path.string()};  // "" is passed over
  // Without the file, a folder is passed over (the answer is another toolkit's, or none).
  CHECK(tl::runtime::find_libdevice(settings).rfind(first.path.string(), 0) == std::string::npos);
  CHECK(tl::runtime::find_libdevice(settings).rfind(second.path.string(), 0) == std::string::npos);
  std::filesystem::create_directories(second.path / "nvvm" / "libdevice");
  std::ofstream(second.path / "nvvm" / "libdevice" / "libdevice.10.bc") << "bitcode";
  CHECK(tl::runtime::find_libdevice(settings) == (second.path / "nvvm" / "libdevice" / "libdevice.10.bc").string());
  std::filesystem::create_directories(first.path / "nvvm" / "libdevice");
  std::ofstream(first.path / "nvvm" / "libdevice" / "libdevice.10.bc") << "bitcode";
  CHECK(tl::runtime::find_libdevice(settings) == (first.path / "nvvm" / "libdevice" / "libdevice.10.bc").string());
  CHECK(tl::runtime::find_toolchain(settings).libdevice == tl::runtime::find_libdevice(settings));
  CHECK(tl::runtime::find_toolchain(settings).link_code_object != nullptr);
}

TEST_CASE("toolchain: ld_lld names the linker, else it is searched for", "[runtime][toolchain]") {
  tl::runtime::ToolchainSettings settings;
  TempDir bin("tl-toolchain-test-bin");
  settings.search_path = {bin.path.string()};
  settings.ld_lld = "/opt/somewhere/ld.lld";
  CHECK(tl::runtime::find_ld_lld(settings) == "/opt/somewhere/ld.lld");
  // Otherwise it is searched for in the search path, then LLVM's own folder.
  settings.ld_lld = "";
  const std::string fallback = tl::runtime::find_ld_lld(settings);
  CHECK((fallback.empty() || fallback.rfind("/usr/lib/llvm-", 0) == 0));
  const std::filesystem::path ld = bin.path / "ld.lld";
  std::ofstream(ld) << "#!/bin/sh\nexit 1\n";
  ::chmod(ld.c_str(), 0755);
  CHECK(tl::runtime::find_ld_lld(settings) == ld.string());
  settings.search_path = {};
  CHECK(tl::runtime::find_ld_lld(settings) == fallback);
}

TEST_CASE("toolchain: linking says what is missing or what the linker said", "[runtime][toolchain]") {
  try {
    tl::runtime::link_code_object("", "object", "k1");
    FAIL("no ld.lld, yet it linked");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) ==
          "kernel k1: linking an AMDGPU code object needs ld.lld (install lld, or set TENSORLISP_LD_LLD)");
  }
  // The toolchain's linker uses the ld.lld the settings name.
  TempDir bin("tl-toolchain-test-ld");
  const std::filesystem::path ld = bin.path / "fake-ld";
  std::ofstream(ld) << "#!/bin/sh\necho fake linker ran >&2\nexit 1\n";
  ::chmod(ld.c_str(), 0755);
  tl::runtime::ToolchainSettings settings;
  settings.ld_lld = ld.string();
  const tl::codegen::Toolchain toolchain = tl::runtime::find_toolchain(settings);
  try {
    toolchain.link_code_object("object", "k2");
    FAIL("the fake linker succeeded");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "kernel k2: ld.lld failed to link the code object: fake linker ran\n");
  }
}

TEST_CASE("toolchain: lld's library links in this process, and its errors come back", "[runtime][toolchain]") {
  if (!tl::runtime::have_linker_library()) {
    WARN("built without lld's library: nothing to check");
    return;
  }
  // With no ld.lld named, the toolchain links with the library.
  const tl::codegen::Toolchain toolchain = tl::runtime::find_toolchain(tl::runtime::ToolchainSettings{});
  // What lld rejects (text, read as a linker script) is an error naming the kernel and quoting lld, and the process
  // goes on (lld ends its process on errors unless told not to); twice, as lld keeps state in globals.
  for (const char* entry : {"k3", "k4"}) {
    try {
      toolchain.link_code_object("not an object file", entry);
      FAIL("lld linked text");
    } catch (const std::runtime_error& e) {
      const std::string message = e.what();
      CHECK(message.rfind(std::string("kernel ") + entry + ": lld failed to link the code object: ", 0) == 0);
      INFO(message);
      CHECK(message.find("unknown directive: not") != std::string::npos);
    }
  }
}
