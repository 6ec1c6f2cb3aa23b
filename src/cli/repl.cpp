// SPDX-License-Identifier: Apache-2.0
// The REPL: multi-line input until a form is complete, line editing, history and completion
// of names, every value printed (and kept in $1 $2 $3), commands (:help), errors reported
// without losing the session.
#include "cli/repl.h"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#ifdef TL_HAVE_LIBEDIT
#include <editline/readline.h>
#endif

namespace tl::cli {

namespace {
// Set while the REPL waits for input, so Ctrl-C cancels the line instead of an evaluation.
volatile sig_atomic_t g_at_prompt = 0;
volatile sig_atomic_t g_line_cancelled = 0;
// A Ctrl-C at the prompt also writes a byte here, which wakes the key reader wherever the
// signal came (a signal between two reads interrupts no read).
int g_cancel_pipe[2] = {-1, -1};
}  // namespace

void on_interrupt_signal(Interpreter* lisp) {
  if (g_at_prompt) {
    g_line_cancelled = 1;
    if (g_cancel_pipe[1] >= 0) {
      const int saved = errno;
      [[maybe_unused]] ssize_t n = write(g_cancel_pipe[1], "c", 1);
      errno = saved;
    }
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
    if (g_line_cancelled) {
      char drain[16];
      while (g_cancel_pipe[0] >= 0 && read(g_cancel_pipe[0], drain, sizeof drain) > 0) {
      }
      return '\n';
    }
    pollfd fds[2] = {{STDIN_FILENO, POLLIN, 0}, {g_cancel_pipe[0], POLLIN, 0}};
    if (poll(fds, g_cancel_pipe[0] >= 0 ? 2 : 1, -1) < 0) {
      if (errno == EINTR) continue;
      return EOF;
    }
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;  // the pipe: see above
    unsigned char c;
    ssize_t n = read(STDIN_FILENO, &c, 1);
    if (n == 1) return c;
    if (n == 0) return EOF;
    if (errno == EINTR || errno == EAGAIN) continue;
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

#ifdef TL_HAVE_LIBEDIT
// Tab completion: names defined now (functions, variables, macros, module:names, keywords
// typed with their colon) for the word at the cursor; inside a string, file names.
Interpreter* g_completing = nullptr;
std::vector<std::string> g_matches;

char* next_match(const char*, int state) {
  static std::size_t index = 0;
  if (state == 0) index = 0;
  return index < g_matches.size() ? strdup(g_matches[index++].c_str()) : nullptr;
}

char** complete_name(const char* text, int start, int) {
  bool in_string = false;
  for (int i = 0; i < start && rl_line_buffer[i] != '\0'; ++i) {
    if (rl_line_buffer[i] == '\\') ++i;
    else if (rl_line_buffer[i] == '"') in_string = !in_string;
  }
  // Inside a string libedit completes a file name, adding nothing after it (the string goes
  // on); a name gets a space.
  rl_completion_append_character = in_string ? '\0' : ' ';
  if (in_string) return nullptr;
  rl_attempted_completion_over = 1;
  g_matches.clear();
  const std::string prefix = text;
  if (g_completing == nullptr || prefix.empty()) return nullptr;
  try {
    // The names containing the prefix, kept when they start with it (case-insensitively).
    Value names = g_completing->eval("(mapcar #'symbol-name (apropos-list " + Value(std::string(prefix)).repr() + "))",
                                     "<completion>");
    for (const Value& name : names.as_list()) {
      std::string n = name.as_string();
      if (n.size() >= prefix.size() && strncasecmp(n.c_str(), prefix.c_str(), prefix.size()) == 0)
        g_matches.push_back(n);
    }
  } catch (const Error&) {
    return nullptr;
  }
  if (g_matches.empty()) return nullptr;
  return rl_completion_matches(text, next_match);
}
#endif

// The REPL's commands, typed at the prompt as the first word of an input: (NAME HELP).
const char* const kCommands[][2] = {
    {":help", "this list"},
    {":describe NAME", "what NAME is: its usage, documentation and where it is defined"},
    {":apropos TEXT", "the defined names containing TEXT"},
    {":expand FORM", "FORM with its macros expanded once, pretty-printed"},
    {":time FORM", "evaluates FORM and prints how long it took"},
    {":load FILE", "loads a file of Lisp"},
    {":bt", "the last error again, with its whole backtrace"},
    {":quit", "leaves the REPL (as Ctrl-D does)"},
};

// Runs command LINE (":name args") when it is one; false when it is not (then it is Lisp, a
// keyword for instance). Throws tl::Error from what it evaluates.
bool run_command(Interpreter& lisp, const std::string& line, const std::string& last_error, bool& quit) {
  std::size_t start = line.find_first_not_of(" \t");
  if (start == std::string::npos || line[start] != ':') return false;
  std::size_t end = line.find_first_of(" \t\n", start);
  const std::string name = line.substr(start, end == std::string::npos ? std::string::npos : end - start);
  std::string arg = end == std::string::npos ? "" : line.substr(end);
  arg.erase(0, arg.find_first_not_of(" \t\n"));
  while (!arg.empty() && (arg.back() == '\n' || arg.back() == ' ')) arg.pop_back();
  auto eval_print = [&](const std::string& code) {  // for what the code prints itself
    lisp.eval(code, "<repl>");
    std::fflush(stdout);
  };
  if (name == ":help" || name == ":h" || name == ":?") {
    std::printf(
        "Type a Lisp form to evaluate it; every value is printed and the last three kept in $1 $2 $3.\n"
        "Tab completes names (file names inside a string); Ctrl-C stops an evaluation; Ctrl-D exits.\n"
        "Commands:\n");
    for (const auto& c : kCommands) std::printf("  %-16s %s\n", c[0], c[1]);
  } else if (name == ":describe" || name == ":d") {
    eval_print("(describe '" + arg + ")");
  } else if (name == ":apropos" || name == ":a") {
    eval_print("(apropos " + Value(std::string(arg)).repr() + ")");
  } else if (name == ":expand") {
    eval_print("(progn (pprint (macroexpand-1 '" + arg + ")) (terpri))");
  } else if (name == ":time") {
    Value v = lisp.eval("(time " + arg + ")", "<repl>");
    std::printf("%s\n", v.repr().c_str());
  } else if (name == ":load") {
    const std::string file = !arg.empty() && arg.front() == '"' ? arg : Value(std::string(arg)).repr();
    Value v = lisp.eval("(load " + file + ")", "<repl>");
    std::printf("%s\n", v.repr().c_str());
  } else if (name == ":bt") {
    std::fprintf(stderr, "%s\n", last_error.empty() ? "no error yet" : last_error.c_str());
  } else if (name == ":quit" || name == ":q") {
    quit = true;
  } else {
    return false;
  }
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
    if (g_cancel_pipe[0] < 0 && pipe2(g_cancel_pipe, O_CLOEXEC | O_NONBLOCK) != 0)
      g_cancel_pipe[0] = g_cancel_pipe[1] = -1;
    rl_getc_function = getc_cancellable;
    g_completing = &lisp;
    rl_attempted_completion_function = complete_name;
    // Names hold - * : + / < > ! ?, so only spaces, parentheses and quotes end a word.
    static char word_breaks[] = " \t\n\"'`(),;";
    rl_basic_word_break_characters = word_breaks;
    if (!history.empty()) read_history(history.c_str());
  }
#endif
  if (interactive) {
    std::printf("TensorLisp %s. :help lists the REPL's commands; (describe 'name) explains a function; Ctrl-D exits.\n",
                Interpreter::version());
  }
  for (const char* name : {"$1", "$2", "$3"}) lisp.set_global(name, Value());
  std::string buffer;
  std::string last_error;  // what :bt prints
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
      bool quit = false;
      if (run_command(lisp, buffer, last_error, quit)) {
        for (char c : buffer) next_line += c == '\n';
        buffer.clear();
        if (quit) break;
        continue;
      }
    } catch (const Error& e) {
      if (e.type() == "exit") return std::atoi(e.message().c_str());
      report_error(e);
      last_error = e.what();
      for (char c : buffer) next_line += c == '\n';
      buffer.clear();
      last_status = 1;
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
      // Every form's value is printed as it is computed, and kept: $1 the last, $2 and $3 before.
      lisp.eval_each(buffer, "<repl>", first, [&](const Value& v) {
        std::printf("%s\n", v.repr().c_str());
        std::fflush(stdout);
        lisp.set_global("$3", lisp.global("$2"));
        lisp.set_global("$2", lisp.global("$1"));
        lisp.set_global("$1", v);
      });
      last_status = 0;
    } catch (const Error& e) {
      if (e.type() == "exit") return std::atoi(e.message().c_str());
      report_error(e);
      last_error = e.what();
      last_status = 1;
    }
    buffer.clear();
  }
  return interactive ? 0 : last_status;
}

}  // namespace tl::cli
