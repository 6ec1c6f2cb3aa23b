// SPDX-License-Identifier: Apache-2.0
#include "runtime/cross_compiler.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "support/condition_error.h"
#include "support/hash.h"
#include "support/log.h"

namespace tl::runtime {

CrossCompiler::CrossCompiler(const std::vector<std::string>& targets, std::string dir,
                             const ToolchainSettings& toolchain)
    : dir_(std::move(dir)) {
  for (const std::string& target : targets) {
    try {
      targets_.push_back(make_codegen(target, toolchain));
    } catch (const std::runtime_error& e) {
      throw ConditionError("device-error", std::string("TENSORLISP_CROSS_TARGETS: ") + e.what());
    }
  }
}

void CrossCompiler::compile(const schedule::ScheduledKernel& sk,
                            const std::unordered_set<const tensor::Node*>& materialized) const {
  const tensor::Node* n = sk.out;
  for (const auto& cg : targets_) {
    std::string name, code, error;
    try {
      codegen::Lowered l = codegen::lower(sk, materialized, cg->lowering());
      char text[32];
      std::snprintf(text, sizeof text, "tl_k%016llx",
                    static_cast<unsigned long long>(fnv1a(cg->target_id() + l.kernel.str())));
      name = text;
      const std::string target = cg->target_id().substr(0, cg->target_id().find('/'));
      const std::string dir = dir_ + "/" + target;
      const std::string ext = target == "nvptx64" ? ".ptx" : target == "amdgcn" ? ".hsaco" : ".o";
      std::filesystem::create_directories(dir);
      if (std::filesystem::exists(dir + "/" + name + ext) || std::filesystem::exists(dir + "/" + name + ".error"))
        continue;
      try {
        code = cg->compile(l.kernel, name, false).object;
      } catch (const std::exception& e) {
        error = e.what();
      }
      // Written whole under a temporary name, then renamed: another process may be reading.
      const std::string file = dir + "/" + name + (error.empty() ? ext : ".error");
      std::ofstream(file + ".tmp", std::ios::binary) << (error.empty() ? code : error + "\n" + l.kernel.str());
      std::filesystem::rename(file + ".tmp", file);
    } catch (const std::exception& e) {
      tl::log("tensorlisp: cross-compiling %s for %s: %s\n", tensor::op_name(n->op), cg->target_id().c_str(), e.what());
    }
  }
}

}  // namespace tl::runtime
