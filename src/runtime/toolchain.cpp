// SPDX-License-Identifier: Apache-2.0
// Finding and running the GPU toolchain (toolchain.h): libdevice, ld.lld.
#include "runtime/toolchain.h"

#include <llvm/Config/llvm-config.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

namespace tl::runtime {

std::string find_libdevice() {
  const char* dirs[] = {std::getenv("CUDA_HOME"), std::getenv("CUDA_PATH"), "/usr/local/cuda", "/usr/lib/cuda"};
  for (const char* dir : dirs) {
    if (dir == nullptr || *dir == 0) continue;
    std::string path = std::string(dir) + "/nvvm/libdevice/libdevice.10.bc";
    if (std::ifstream(path).good()) return path;
  }
  return "";
}

std::string find_ld_lld() {
  if (const char* env = std::getenv("TENSORLISP_LD_LLD"); env != nullptr && *env != 0) return env;
  std::vector<std::string> dirs;
  if (const char* path = std::getenv("PATH")) {
    std::string p(path);
    for (std::size_t i = 0; i <= p.size();) {
      std::size_t j = p.find(':', i);
      if (j == std::string::npos) j = p.size();
      if (j > i) dirs.push_back(p.substr(i, j - i));
      i = j + 1;
    }
  }
  dirs.push_back("/usr/lib/llvm-" + std::to_string(LLVM_VERSION_MAJOR) + "/bin");
  for (const auto& d : dirs) {
    for (const char* name : {"ld.lld", "ld.lld-" LLVM_VERSION_STRING}) {
      std::string f = d + "/" + name;
      if (::access(f.c_str(), X_OK) == 0) return f;
    }
  }
  return "";
}

std::string link_code_object(const std::string& object, const std::string& entry) {
  static const std::string ld = find_ld_lld();
  if (ld.empty()) throw std::runtime_error("kernel " + entry + ": linking an AMDGPU code object needs ld.lld (install lld, or set TENSORLISP_LD_LLD)");
  char dir_template[] = "/tmp/tensorlisp-amdgpu-XXXXXX";
  const char* dir = ::mkdtemp(dir_template);
  if (dir == nullptr) throw std::runtime_error("kernel " + entry + ": cannot make a temporary folder to link in");
  const std::string in = std::string(dir) + "/k.o", out = std::string(dir) + "/k.hsaco", log = std::string(dir) + "/log";
  std::ofstream(in, std::ios::binary) << object;
  const std::string cmd = "'" + ld + "' -shared --no-undefined -o '" + out + "' '" + in + "' 2>'" + log + "'";
  const int rc = std::system(cmd.c_str());
  std::ifstream result(out, std::ios::binary), messages(log);
  std::string code((std::istreambuf_iterator<char>(result)), std::istreambuf_iterator<char>());
  std::string text((std::istreambuf_iterator<char>(messages)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  if (rc != 0 || code.empty()) throw std::runtime_error("kernel " + entry + ": ld.lld failed to link the code object: " + text);
  return code;
}

codegen::Toolchain find_toolchain() {
  return codegen::Toolchain{
      .libdevice = find_libdevice(),
      .link_code_object = link_code_object,
  };
}

std::unique_ptr<codegen::Codegen> make_codegen(const std::string& target) {
  return codegen::make_codegen(target, find_toolchain());
}

}  // namespace tl::runtime
