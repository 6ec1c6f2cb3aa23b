// SPDX-License-Identifier: Apache-2.0
// The REPL: multi-line input until a form is complete, line editing and history, results
// printed, errors reported without losing the session.
#include "cli/repl.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#ifdef TL_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

namespace tl::cli {

void report_error(const Error& e) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s\n", e.what());
  std::fflush(stderr);
}

namespace {

std::string history_path() {
  const char* home = std::getenv("HOME");
  return home != nullptr ? std::string(home) + "/.tlisp_history" : std::string();
}

// Reads one line; false at end of input. `interactive` shows the prompt and edits the line.
bool read_line(bool interactive, const char* prompt, std::string& line) {
#ifdef TL_HAVE_LIBEDIT
  if (interactive) {
    char* text = readline(prompt);
    if (text == nullptr) return false;
    line = text;
    std::free(text);
    return true;
  }
#else
  if (interactive) {
    std::fputs(prompt, stdout);
    std::fflush(stdout);
  }
#endif
  if (!std::getline(std::cin, line)) return false;
  return true;
}

bool is_blank(const std::string& s) {
  for (char c : s) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

}  // namespace

int run_repl(Interpreter& lisp) {
  bool interactive = isatty(STDIN_FILENO) != 0;
  std::string history = history_path();
#ifdef TL_HAVE_LIBEDIT
  if (interactive && !history.empty()) read_history(history.c_str());
#endif
  if (interactive) {
    std::printf("TensorLisp %s. (describe 'name) explains a function; Ctrl-D exits.\n", Interpreter::version());
  }
  std::string buffer;
  int last_status = 0;
  for (;;) {
    const char* prompt = buffer.empty() ? "tl> " : "... ";
    std::string line;
    if (!read_line(interactive, prompt, line)) {
      if (interactive) std::printf("\n");
      break;
    }
    buffer += line;
    buffer += '\n';
    if (is_blank(buffer)) {
      buffer.clear();
      continue;
    }
    try {
      if (lisp.check_complete(buffer) == Interpreter::ReadStatus::NeedsMore) continue;
    } catch (const Error& e) {
      report_error(e);
      buffer.clear();
      last_status = 1;
      continue;
    }
#ifdef TL_HAVE_LIBEDIT
    if (interactive) {
      std::string entry = buffer.substr(0, buffer.size() - 1);
      add_history(entry.c_str());
      if (!history.empty()) write_history(history.c_str());
    }
#endif
    try {
      Value v = lisp.eval(buffer, "<repl>");
      std::printf("%s\n", v.repr().c_str());
      std::fflush(stdout);
      last_status = 0;
    } catch (const Error& e) {
      if (e.type() == "exit") return std::atoi(e.message().c_str());
      report_error(e);
      last_status = 1;
    }
    buffer.clear();
  }
  return interactive ? 0 : last_status;
}

}  // namespace tl::cli
