// SPDX-License-Identifier: Apache-2.0
// The interactive read-eval-print loop of the tlisp command.
#pragma once

#include <tensorlisp/tensorlisp.hpp>

namespace tl::cli {

// Runs the REPL on stdin until end of input; returns the process exit status. With a terminal,
// lines are edited with libedit and kept in ~/.tlisp_history.
int run_repl(Interpreter& lisp);

// Prints an error report to stderr.
void report_error(const Error& e);

// Called from the SIGINT handler: interrupts the evaluation, or cancels the line being typed.
void on_interrupt_signal(Interpreter* lisp);

}  // namespace tl::cli
