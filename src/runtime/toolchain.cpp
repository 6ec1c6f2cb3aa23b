// SPDX-License-Identifier: Apache-2.0
// Finding and running the GPU toolchain (toolchain.h): libdevice, ld.lld.
#include "runtime/toolchain.h"

#include <llvm/Config/llvm-config.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <stdexcept>

namespace tl::runtime {

std::string find_libdevice(const ToolchainSettings& settings) {
  std::vector<std::string> dirs = settings.cuda_dirs;
  dirs.push_back("/usr/local/cuda");
  dirs.push_back("/usr/lib/cuda");
  for (const std::string& dir : dirs) {
    if (dir.empty()) continue;
    std::string path = dir + "/nvvm/libdevice/libdevice.10.bc";
    if (std::ifstream(path).good()) return path;
  }
  return "";
}

std::string find_ld_lld(const ToolchainSettings& settings) {
  if (!settings.ld_lld.empty()) return settings.ld_lld;
  std::vector<std::string> dirs;
  for (const std::string& d : settings.search_path) {
    if (!d.empty()) dirs.push_back(d);
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

std::string link_code_object(const std::string& ld, const std::string& object, const std::string& entry) {
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

codegen::Toolchain find_toolchain(const ToolchainSettings& settings) {
  // ld.lld is looked for once, when the first AMDGPU kernel is linked (most devices never do).
  struct Linker {
    ToolchainSettings settings;
    std::once_flag found;
    std::string ld;
  };
  auto linker = std::make_shared<Linker>();
  linker->settings = settings;
  return codegen::Toolchain{
      .libdevice = find_libdevice(settings),
      .link_code_object =
          [linker](const std::string& object, const std::string& entry) {
            std::call_once(linker->found, [&] { linker->ld = find_ld_lld(linker->settings); });
            return link_code_object(linker->ld, object, entry);
          },
  };
}

std::unique_ptr<codegen::Codegen> make_codegen(const std::string& target, const ToolchainSettings& settings) {
  return codegen::make_codegen(target, find_toolchain(settings));
}

}  // namespace tl::runtime
