// SPDX-License-Identifier: Apache-2.0
// Ahead-of-time programs (tlisp compile): the kernels of a traced function and a driver that
// runs them in order, emitted as one relocatable object file (position independent) with one
// C entry point and nothing else visible, so it links into a program that does not embed
// TensorLisp (only the C library is needed: memmove, malloc and free, and libm for the math
// LLVM leaves as calls).
//
// The entry point is
//   int NAME(void* p0, ..., void* pN-1, void* workspace)
// with one pointer per Program::params. It returns 0, or the 1-based code of the first
// check that failed (its message from NAME_error(code)), or -1 when WORKSPACE is null and
// allocating Program::workspace_bytes failed. NAME_error(int) returns a static string.
// The runtime (runtime/aot.h) makes Programs from traces; this file only emits them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "codegen/loop_ir.h"

namespace tl::codegen {

// Where a buffer of the program lives.
struct ProgramRef {
  enum Kind { Null, Param, Data, Workspace } kind = Null;
  int index = 0;            // Param: the entry's parameter; Data: Program::data's entry
  std::int64_t offset = 0;  // Workspace: bytes from its start
};

struct Program {
  std::string name;  // the entry point's C name
  int params = 0;    // pointer parameters before the workspace
  std::int64_t workspace_bytes = 0;
  std::vector<std::shared_ptr<const Kernel>> kernels;  // the loop IR of each kernel called
  struct Data {
    std::string bytes;      // the initial contents (weights, constants)
    bool writable = false;  // some kernel or copy writes it (an assign to a weight)
  };
  std::vector<Data> data;
  // The driver's steps, in order.
  struct Op {
    enum Kind { Call, Copy, Check } kind = Call;
    // Call: kernel `kernel` on BUFFERS with symbolic sizes VARS, iterations [0, count).
    int kernel = 0;
    std::vector<ProgramRef> buffers;
    std::vector<std::int64_t> vars;
    std::int64_t count = 0;
    // Copy: BYTES from SRC to DST (they may overlap). Check: the byte at SRC must be nonzero,
    // else the entry returns CODE.
    ProgramRef dst, src;
    std::int64_t bytes = 0;
    int code = 0;
  };
  std::vector<Op> ops;
  std::vector<std::string> errors;  // the message of check code i+1
};

// How the object's code is generated: for the CPU named CPU ("native": this machine's, with
// every feature it has; else an LLVM CPU name such as x86-64, x86-64-v3 or skylake-avx512),
// for the host's target triple.
struct ProgramTarget {
  std::string cpu = "native";
};

// The program as an ELF relocatable object. Throws std::runtime_error for an unknown CPU.
std::string compile_program(const Program& p, const ProgramTarget& target);

}  // namespace tl::codegen
