// SPDX-License-Identifier: Apache-2.0
// Finding and running the GPU toolchain (toolchain.h): libdevice, ld.lld.
#include "runtime/toolchain.h"

#include <fcntl.h>
#include <llvm/Config/llvm-config.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <stdexcept>
#include <thread>
#if TL_HAVE_LLD
#include <lld/Common/Driver.h>
#include <llvm/Support/raw_ostream.h>
#endif

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

namespace {

// A temporary folder to link kernel ENTRY in, holding OBJECT as k.o; removed with it.
struct LinkFolder {
  std::string dir;
  LinkFolder(const std::string& object, const std::string& entry) {
    char dir_template[] = "/tmp/tensorlisp-amdgpu-XXXXXX";
    if (::mkdtemp(dir_template) == nullptr)
      throw std::runtime_error("kernel " + entry + ": cannot make a temporary folder to link in");
    dir = dir_template;
    std::ofstream(input(), std::ios::binary) << object;
  }
  ~LinkFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(dir, ignored);
  }
  LinkFolder(const LinkFolder&) = delete;
  LinkFolder& operator=(const LinkFolder&) = delete;
  std::string input() const { return dir + "/k.o"; }
};

}  // namespace

std::string link_code_object(const std::string& ld, const std::string& object, const std::string& entry) {
  if (ld.empty()) throw std::runtime_error("kernel " + entry + ": linking an AMDGPU code object needs ld.lld (install lld, or set TENSORLISP_LD_LLD)");
  const LinkFolder folder(object, entry);
  const std::string in = folder.input(), out = folder.dir + "/k.hsaco", log = folder.dir + "/log";
  const std::string cmd = "'" + ld + "' -shared --no-undefined -o '" + out + "' '" + in + "' 2>'" + log + "'";
  const int rc = std::system(cmd.c_str());
  std::ifstream result(out, std::ios::binary), messages(log);
  std::string code((std::istreambuf_iterator<char>(result)), std::istreambuf_iterator<char>());
  std::string text((std::istreambuf_iterator<char>(messages)), std::istreambuf_iterator<char>());
  if (rc != 0 || code.empty()) throw std::runtime_error("kernel " + entry + ": ld.lld failed to link the code object: " + text);
  return code;
}

bool have_linker_library() { return TL_HAVE_LLD != 0; }

std::string link_code_object_in_process(const std::string& object, const std::string& entry) {
#if TL_HAVE_LLD
  // lld keeps its state in globals: one link at a time. It reads its input from a file in a
  // folder of its own, and writes its output into a pipe that a thread here drains: lld
  // writes a regular file as a temporary one that LLVM removes on a signal, which installs
  // LLVM's signal handlers (SIGINT's included) and its own alternate signal stack on this
  // thread; it writes anything else (a pipe) from memory, when it has linked.
  static std::mutex one_at_a_time;
  std::lock_guard<std::mutex> lock(one_at_a_time);
  const LinkFolder folder(object, entry);
  const std::string in = folder.input();
  int pipe_ends[2];
  if (::pipe2(pipe_ends, O_CLOEXEC) != 0)
    throw std::runtime_error("kernel " + entry + ": cannot make a pipe to link into");
  std::string code;
  std::thread drain([&code, from = pipe_ends[0]] {
    char buf[1 << 16];
    for (;;) {
      const ssize_t n = ::read(from, buf, sizeof buf);
      if (n > 0) code.append(buf, static_cast<std::size_t>(n));
      else if (n == 0 || errno != EINTR) break;
    }
  });
  const std::string out = "/proc/self/fd/" + std::to_string(pipe_ends[1]);
  const char* args[] = {"ld.lld", "-shared", "--no-undefined", "--threads=1", "-o", out.c_str(), in.c_str()};
  std::string messages;
  llvm::raw_string_ostream errors(messages);
  // exitEarly false: an error returns here rather than ending the process.
  const bool ok = lld::elf::link(args, llvm::nulls(), errors, /*exitEarly=*/false, /*disableOutput=*/false);
  lld::CommonLinkerContext::destroy();
  errors.flush();
  ::close(pipe_ends[1]);  // lld closed the end it opened: the reader sees the end of the code
  drain.join();
  ::close(pipe_ends[0]);
  if (!ok || code.empty())
    throw std::runtime_error("kernel " + entry + ": lld failed to link the code object: " + messages);
  return code;
#else
  throw std::runtime_error("kernel " + entry + ": this build has no lld library (built without liblld-" +
                           std::to_string(LLVM_VERSION_MAJOR) + "-dev)");
#endif
}

codegen::Toolchain find_toolchain(const ToolchainSettings& settings) {
  // Linked in this process by lld's library when the build has it and no ld.lld is named:
  // starting an ld.lld for each kernel took 25 ms, most of it loading LLVM's shared library.
  if (settings.ld_lld.empty() && have_linker_library()) {
    return codegen::Toolchain{.libdevice = find_libdevice(settings), .link_code_object = link_code_object_in_process};
  }
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
