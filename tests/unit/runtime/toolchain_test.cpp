// SPDX-License-Identifier: Apache-2.0
// Unit tests for runtime/toolchain.h: where libdevice and ld.lld are looked for, and that the
// toolchain handed to codegen (codegen::Toolchain) carries them.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "runtime/toolchain.h"

namespace {

// Sets environment variable `name` for the test's scope, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace

TEST_CASE("toolchain: libdevice is found under CUDA_HOME first", "[runtime][toolchain]") {
  const std::filesystem::path home = std::filesystem::temp_directory_path() / "tl-toolchain-test-cuda";
  std::filesystem::remove_all(home);
  ScopedEnv cuda_home("CUDA_HOME", home.c_str());
  // Without the file, CUDA_HOME is passed over (the answer is another toolkit's, or none).
  CHECK(tl::runtime::find_libdevice().rfind(home.string(), 0) == std::string::npos);
  std::filesystem::create_directories(home / "nvvm" / "libdevice");
  std::ofstream(home / "nvvm" / "libdevice" / "libdevice.10.bc") << "bitcode";
  CHECK(tl::runtime::find_libdevice() == (home / "nvvm" / "libdevice" / "libdevice.10.bc").string());
  CHECK(tl::runtime::find_toolchain().libdevice == tl::runtime::find_libdevice());
  CHECK(tl::runtime::find_toolchain().link_code_object != nullptr);
  std::filesystem::remove_all(home);
}

TEST_CASE("toolchain: TENSORLISP_LD_LLD names the linker", "[runtime][toolchain]") {
  {
    ScopedEnv ld("TENSORLISP_LD_LLD", "/opt/somewhere/ld.lld");
    CHECK(tl::runtime::find_ld_lld() == "/opt/somewhere/ld.lld");
  }
  // Otherwise it is searched for on PATH: nothing on an empty one but LLVM's own folder.
  ScopedEnv ld("TENSORLISP_LD_LLD", nullptr);
  ScopedEnv path("PATH", "");
  const std::string found = tl::runtime::find_ld_lld();
  CHECK((found.empty() || found.rfind("/usr/lib/llvm-", 0) == 0));
}
