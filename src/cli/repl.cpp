// SPDX-License-Identifier: Apache-2.0
// The REPL: multi-line input until a form is complete, line editing and history, results
// printed, errors reported without losing the session.
#include "cli/repl.h"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>

#ifdef TL_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

namespace tl::cli {

namespace {
// Set while the REPL waits for input, so Ctrl-C cancels the line instead of an evaluation.
volatile sig_atomic_t g_at_prompt = 0;
volatile sig_atomic_t g_line_cancelled = 0;
}  // namespace

void on_interrupt_signal(Interpreter* lisp) {
  if (g_at_prompt) {
    g_line_cancelled = 1;
  } else if (lisp != nullptr) {
    lisp->interrupt();
  }
}

void report_error(const Error& e) {
  std::fflush(stdout);
  if (e.type() == "interrupt") {
    // Where it was: the form running and the innermost calls (the whole backtrace of a deep
    // recursion would bury the prompt).
    std::string where;
    if (e.has_location()) {
      const SourceLocation& l = e.location();
      where = " at " + l.file + ":" + std::to_string(l.line) + ":" + std::to_string(l.column);
    }
    std::fprintf(stderr, "\ninterrupted%s\n", where.c_str());
    const auto& frames = e.backtrace();
    for (std::size_t i = 0; i < frames.size() && i < 3; ++i) std::fprintf(stderr, "  %s\n", frames[i].c_str());
    if (frames.size() > 3) std::fprintf(stderr, "  ... (%zu more)\n", frames.size() - 3);
  } else {
    std::fprintf(stderr, "%s\n", e.what());
  }
  std::fflush(stderr);
}

namespace {

#ifdef TL_HAVE_LIBEDIT
// Reads one character for libedit; a Ctrl-C while waiting ends the line as cancelled.
int getc_cancellable(FILE*) {
  for (;;) {
    unsigned char c;
    ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n == 1) return c;
    if (n == 0) return EOF;
    if (errno == EINTR) {
      if (g_line_cancelled) return '\n';
      continue;
    }
    return EOF;
  }
}
#endif

std::string history_path() {
  const char* home = std::getenv("HOME");
  return home != nullptr ? std::string(home) + "/.tlisp_history" : std::string();
}

// Reads one line; false at end of input. `interactive` shows the prompt and edits the line.
bool read_line(bool interactive, const char* prompt, std::string& line) {
#ifdef TL_HAVE_LIBEDIT
  if (interactive) {
    g_line_cancelled = 0;
    g_at_prompt = 1;
    char* text = readline(prompt);
    g_at_prompt = 0;
    if (text == nullptr) return g_line_cancelled != 0;
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
  if (interactive) {
    rl_catch_signals = 0;
    rl_getc_function = getc_cancellable;
    if (!history.empty()) read_history(history.c_str());
  }
#endif
  if (interactive) {
    std::printf("TensorLisp %s. (describe 'name) explains a function; Ctrl-D exits.\n", Interpreter::version());
  }
  std::string buffer;
  int last_status = 0;
  int next_line = 1;  // inputs are numbered as the lines of one continuing text, <repl>
  for (;;) {
    const char* prompt = buffer.empty() ? "tl> " : "... ";
    std::string line;
    if (!read_line(interactive, prompt, line)) {
      if (interactive) std::printf("\n");
      if (!is_blank(buffer)) {  // input ended inside a form: report it
        try {
          lisp.eval(buffer, "<repl>", next_line);
        } catch (const Error& e) {
          report_error(e);
          last_status = 1;
        }
      }
      break;
    }
    if (g_line_cancelled) {  // Ctrl-C at the prompt: drop what was typed so far
      g_line_cancelled = 0;
      buffer.clear();
      continue;
    }
    buffer += line;
    buffer += '\n';
    if (is_blank(buffer)) {
      buffer.clear();
      continue;
    }
    try {
      if (lisp.check_complete(buffer, next_line) == Interpreter::ReadStatus::NeedsMore) continue;
    } catch (const Error& e) {
      report_error(e);
      for (char c : buffer) next_line += c == '\n';
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
      int first = next_line;
      for (char c : buffer) next_line += c == '\n';
      Value v = lisp.eval(buffer, "<repl>", first);
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
