// SPDX-License-Identifier: Apache-2.0
// The tlisp command: a REPL, script runner and one-line evaluator over the public API.
#include <malloc.h>
#include <pthread.h>
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cli/repl.h"
#include "codegen/passes/passes.h"

namespace {

// The interpreter that Ctrl-C interrupts. A signal handler can reach nothing else.
tl::Interpreter* g_interruptible = nullptr;

extern "C" void on_sigint(int) { tl::cli::on_interrupt_signal(g_interruptible); }

void install_sigint() {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocked read returns so the REPL can clear its line
  sigaction(SIGINT, &sa, nullptr);
}

const char* kUsage =
    "usage: tlisp [options] [FILE.lisp [ARGS...]]\n"
    "\n"
    "  tlisp                  start the interactive REPL\n"
    "  tlisp FILE.lisp ARGS   run a script; ARGS are in *argv*\n"
    "  tlisp -e FORM          evaluate FORM and print its value (may be repeated)\n"
    "  tlisp -i FILE.lisp     load FILE.lisp, then start the REPL\n"
    "  tlisp test-backend RUNTIME.lisp [-o REPORT.md] [--options \"k=v\"] [--only TEXT]\n"
    "                         run the op conformance suite on a backend against the\n"
    "                         reference executor and write a Markdown report\n"
    "  tlisp doc DIR          write the HTML reference manual into DIR, running its examples\n"
    "  tlisp compile FILE.lisp --entry NAME --shapes 4x784 [-o PREFIX]\n"
    "                         compile the function NAME ahead of time into PREFIX.o and\n"
    "                         PREFIX.h, a C entry point (tlisp compile --help for more)\n"
    "\n"
    "options:\n"
    "  -d, --device NAME      run tensors on device NAME: cpu (the JIT), ref (the reference\n"
    "                         executor), or another backend with a runtime file\n"
    "  --dump-after=PASS      print each kernel's loop IR after lowering pass PASS (or all)\n"
    "  --print-passes         list the lowering passes and exit\n"
    "  --profile=TRACE.json   profile the run: print a summary of where the time went (to\n"
    "                         standard error) and write a Chrome trace (Perfetto) at the end\n"
    "  -h, --help             show this help\n"
    "  -v, --version          show the version\n"
    "\n"
    "environment:\n"
    "  TENSORLISP_PATH        colon-separated folders searched by (require 'name) and for\n"
    "                         backend libraries and runtime files\n"
    "  TENSORLISP_DEVICE      the default device (as --device)\n"
    "  TENSORLISP_DEBUG       1: kernels and times per realize, 2: also loop IR, 3: also LLVM IR\n"
    "  TENSORLISP_DUMP_AFTER  as --dump-after\n"
    "  TENSORLISP_PROFILE     as --profile\n"
    "  TENSORLISP_THREADS     CPU threads (default: all cores)\n"
    "  TENSORLISP_CPU         compile CPU kernels for this LLVM CPU (x86-64-v3: an AVX2\n"
    "                         machine's code and rounding) instead of this machine's\n"
    "  TENSORLISP_BEAM        N: beam search over each new CPU kernel's opts, the N fastest\n"
    "                         kept per round, results kept on disk (see (with-beam N ...))\n"
    "  TENSORLISP_BEAM_BUDGET the most seconds one kernel's search takes (default 30)\n";

struct Args {
  std::string device;
  std::string profile;  // where the trace goes; empty: no profile
  std::vector<std::string> exprs;
  std::string script;
  bool interactive_after = false;
  std::vector<std::string> script_args;
  int argc;
  char** argv;
};

int run(Args& args) {
  tl::Interpreter::Options options;
  options.argv = args.script_args;
  std::unique_ptr<tl::Interpreter> lisp;
  try {
    lisp = std::make_unique<tl::Interpreter>(options);
  } catch (const tl::Error& e) {
    tl::cli::report_error(e);
    return 70;
  }
#ifndef TL_SANITIZE
  // The process ends with this run: its memory goes back to the system at exit, so freeing
  // every object one by one first (a tenth of `tlisp -e 1`) is skipped. Sanitizer builds free
  // it, so their leak checks still cover the whole teardown.
  struct Abandon {
    std::unique_ptr<tl::Interpreter>& lisp;
    ~Abandon() { (void)lisp.release(); }
  } abandon{lisp};
#endif
  g_interruptible = lisp.get();
  install_sigint();
  int status = 0;
  if (!args.device.empty()) {
    try {
      lisp->call("use-backend", {tl::Value::symbol(args.device)});
    } catch (const tl::Error& e) {
      tl::cli::report_error(e);
      return 2;
    }
  }
  // --profile: the whole run is profiled; the summary and trace come at its end, also after an
  // error (where the time went before it is still worth seeing).
  struct Profile {
    tl::Interpreter& lisp;
    const std::string& path;
    ~Profile() {
      if (path.empty()) return;
      try {
        if (lisp.call("profilingp").is_nil()) {
          std::fprintf(stderr, "profile: the script stopped the profile itself (profile-stop); no trace written\n");
          return;
        }
        // Profile-starts the script left open nest inside the run's: stop them all.
        tl::Value summary;
        while (!lisp.call("profilingp").is_nil()) summary = lisp.call("profile-stop", {tl::Value(path)});
        std::fprintf(stderr, "%s", summary.as_string().c_str());
        std::fprintf(stderr, "profile: trace written to %s\n", path.c_str());
      } catch (const tl::Error& e) {
        tl::cli::report_error(e);
      }
    }
  };
  if (!args.profile.empty()) {
    try {
      lisp->call("profile-start", {});
    } catch (const tl::Error& e) {
      tl::cli::report_error(e);
      return 2;
    }
  }
  Profile profile{*lisp, args.profile};
  try {
    for (const std::string& expr : args.exprs) {
      // Every value is printed, nil too, as the REPL prints it.
      const std::string text = lisp->eval(expr, "<command line>").repr();  // all of it: a string may hold a NUL
      std::fwrite(text.data(), 1, text.size(), stdout);
      std::fputc('\n', stdout);
    }
    if (!args.script.empty()) lisp->load(args.script);
  } catch (const tl::Error& e) {
    if (e.type() == "exit") return std::atoi(e.message().c_str());
    tl::cli::report_error(e);
    status = 1;
    if (!args.interactive_after) return status;
  }
  if ((args.exprs.empty() && args.script.empty()) || args.interactive_after) {
    status = tl::cli::run_repl(*lisp);
  }
  std::fflush(stdout);
  g_interruptible = nullptr;
  return status;
}

void* run_thread(void* p) {
  auto* args = static_cast<Args*>(p);
  return reinterpret_cast<void*>(static_cast<intptr_t>(run(*args)));
}

}  // namespace

int main(int argc, char** argv) {
#ifdef M_TOP_PAD
  // The evaluating thread's malloc arena grows by the pad each time it runs out: by the
  // default 128 KiB, loading the prelude took 1,700 mprotect calls (5% of start-up). The pad
  // is address space; pages count as memory only once written.
  mallopt(M_TOP_PAD, 16 << 20);
#endif
  // The library's messages (debug output, warnings) go to standard error, whole.
  tl::set_log_sink([](std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
  });
  Args args{"", "", {}, "", false, {}, argc, argv};
  if (const char* p = std::getenv("TENSORLISP_PROFILE"); p != nullptr && *p != '\0') args.profile = p;
  // Subcommands written in Lisp: the conformance report (stdlib/conformance.lisp) and the
  // manual (stdlib/manual.lisp); the rest of the words are their own.
  if (argc >= 2 && (std::strcmp(argv[1], "test-backend") == 0 || std::strcmp(argv[1], "doc") == 0 ||
                    std::strcmp(argv[1], "compile") == 0)) {
    const char* module = std::strcmp(argv[1], "doc") == 0       ? "manual"
                         : std::strcmp(argv[1], "compile") == 0 ? "aot"
                                                                : "conformance";
    args.exprs = {std::string("(progn (require '") + module + ") (" + module + ":main *argv*))"};
    for (int i = 2; i < argc; ++i) args.script_args.push_back(argv[i]);
    argc = 1;
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (a == "-v" || a == "--version") {
      std::printf("tlisp %s\n", tl::Interpreter::version());
      return 0;
    }
    if (a == "-e" || a == "--eval") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tlisp: %s needs a form to evaluate\n%s", a.c_str(), kUsage);
        return 2;
      }
      args.exprs.push_back(argv[++i]);
      continue;
    }
    if (a == "-d" || a == "--device") {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tlisp: %s needs a device name\n%s", a.c_str(), kUsage);
        return 2;
      }
      args.device = argv[++i];
      continue;
    }
    if (a == "-i") {
      args.interactive_after = true;
      continue;
    }
    if (a == "--print-passes") {
      std::printf("Lowering passes, in order (an opt names its pass; see docs/ARCHITECTURE.md):\n");
      for (const auto& p : tl::codegen::lowering_passes()) std::printf("  %-13s %s\n", p.name, p.what);
      return 0;
    }
    if (a.rfind("--dump-after", 0) == 0) {
      std::string pass = a.size() > 13 && a[12] == '=' ? a.substr(13) : "";
      if (a == "--dump-after" && i + 1 < argc) pass = argv[++i];
      bool known = pass == "all";
      for (const auto& p : tl::codegen::lowering_passes()) known = known || pass == p.name;
      if (!known) {
        std::fprintf(
            stderr, "tlisp: --dump-after needs a lowering pass (or all), not \"%s\"; tlisp --print-passes lists them\n",
            pass.c_str());
        return 2;
      }
      setenv("TENSORLISP_DUMP_AFTER", pass.c_str(), 1);
      continue;
    }
    if (a.rfind("--profile", 0) == 0) {
      std::string path = a.size() > 10 && a[9] == '=' ? a.substr(10) : "";
      if (a == "--profile" && i + 1 < argc) path = argv[++i];
      if (path.empty() || (a != "--profile" && a[9] != '=')) {
        std::fprintf(stderr, "tlisp: --profile needs the file to write the trace to (--profile=trace.json)\n%s",
                     kUsage);
        return 2;
      }
      args.profile = path;
      continue;
    }
    if (a == "--") {
      ++i;
      if (i < argc) args.script = argv[i++];
      for (; i < argc; ++i) args.script_args.push_back(argv[i]);
      break;
    }
    if (!a.empty() && a[0] == '-' && a != "-") {
      std::fprintf(stderr, "tlisp: unknown option %s\n%s", a.c_str(), kUsage);
      return 2;
    }
    args.script = a;
    for (++i; i < argc; ++i) args.script_args.push_back(argv[i]);
    break;
  }
  // Evaluate on a thread with a large stack so deep (non-tail) recursion has room; the
  // interpreter still stops cleanly with a stack-overflow error before the end of it.
  pthread_attr_t attr;
  pthread_attr_init(&attr);
#ifdef TL_SANITIZE
  // AddressSanitizer mishandles exceptions thrown on stacks of 64 MiB and more.
  pthread_attr_setstacksize(&attr, 60u << 20);
#else
  pthread_attr_setstacksize(&attr, 256u << 20);
#endif
  pthread_t thread;
  if (pthread_create(&thread, &attr, run_thread, &args) != 0) return run(args);
  // Ctrl-C must reach the evaluating thread, where it interrupts a blocked read.
  sigset_t block;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  pthread_sigmask(SIG_BLOCK, &block, nullptr);
  void* result = nullptr;
  pthread_join(thread, &result);
  pthread_attr_destroy(&attr);
  return static_cast<int>(reinterpret_cast<intptr_t>(result));
}
