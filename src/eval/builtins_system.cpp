// SPDX-License-Identifier: Apache-2.0
// System builtins: printing, loading files and modules, the collector, clocks, environment
// variables and files.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "eval/builtins.h"
#include "eval/streams.h"

namespace tl::eval {

namespace {

using Args = Value*;
using N = std::uint32_t;

std::string module_name(Interp& in, Value v) {
  if (is_symbol(v)) return as_symbol(v)->name;
  if (is_string(v)) return as_string(v)->text;
  in.type_error("require", 1, "a symbol or string", v);
}

}  // namespace

void register_system_builtins(Interp& in) {
  TL_BUILTIN(in, "print", 1, 2, "(print X [STREAM])",
             "Prints X readably (strings in quotes) and a newline; returns X."
             "\n  (with-output-to-string (s) (print \"hi\"))  ; => \"\\\"hi\\\"\\n\"",
             [](Interp& in, Args a, N n) -> Value {
               const StreamArg to(in, "print", a, n, 1);
               in.write(in.repr(a[0]) + "\n");
               return a[0];
             });
  TL_BUILTIN(in, "prin1", 1, 2, "(prin1 X [STREAM])",
             "Prints X readably, with no newline; returns X."
             "\n  (with-output-to-string (s) (prin1 \"hi\") (prin1 #\\a))  ; => \"\\\"hi\\\"#\\\\a\"",
             [](Interp& in, Args a, N n) -> Value {
               const StreamArg to(in, "prin1", a, n, 1);
               in.write(in.repr(a[0]));
               return a[0];
             });
  TL_BUILTIN(in, "princ", 1, 2, "(princ X [STREAM])",
             "Prints X for people (strings without quotes), with no newline; returns X."
             "\n  (with-output-to-string (s) (princ \"hi\") (princ #\\a))  ; => \"hia\"",
             [](Interp& in, Args a, N n) -> Value {
               const StreamArg to(in, "princ", a, n, 1);
               in.write(in.repr(a[0], false));
               return a[0];
             });
  TL_BUILTIN(in, "terpri", 0, 1, "(terpri [STREAM])",
             "Prints a newline."
             "\n  (with-output-to-string (s) (princ 1) (terpri) (princ 2))  ; => \"1\\n2\"",
             [](Interp& in, Args a, N n) -> Value {
               const StreamArg to(in, "terpri", a, n, 0);
               in.write("\n");
               return nil();
             });
  TL_BUILTIN(in, "make-string-output-stream", 0, 0, "(make-string-output-stream)",
             "A stream that collects what is printed to it (princ, prin1, print, terpri, format, write-string "
             "... given it as their stream) into a string, which get-output-stream-string returns."
             "\n  (let ((s (make-string-output-stream)))"
             "\n    (format s \"~a-~a\" 1 2) (princ \"!\" s)"
             "\n    (get-output-stream-string s))  ; => \"1-2!\"",
             [](Interp& in, Args, N) -> Value {
               return Value::object(in.heap.make<StringOutputStream>(ObjKind::Foreign));
             });
  TL_BUILTIN(in, "get-output-stream-string", 1, 1, "(get-output-stream-string STREAM)",
             "What was printed to the string output STREAM since it was made or last asked; empties it."
             "\n  (let ((s (make-string-output-stream)))"
             "\n    (princ 1 s) (list (get-output-stream-string s) (progn (princ 2 s) (get-output-stream-string s))))"
             "  ; => (\"1\" \"2\")",
             [](Interp& in, Args a, N) -> Value {
               StringOutputStream* s = as_string_stream(a[0]);
               if (s == nullptr) in.type_error("get-output-stream-string", 1, "a string output stream", a[0]);
               std::string text = std::move(s->text);
               s->text.clear();
               return in.make_string(std::move(text));
             });
  TL_BUILTIN(in, "%make-error-output-stream", 0, 0, "(%make-error-output-stream)",
             "A stream writing to the process's standard error: *error-output*'s value.",
             [](Interp& in, Args, N) -> Value {
               return Value::object(in.heap.make<ErrorOutputStream>(ObjKind::Foreign));
             });
  TL_BUILTIN(in, "%output-stream-p", 1, 1, "(%output-stream-p X)",
             "True when X is an output stream: a string output stream or *error-output*'s."
             "\n  (%output-stream-p *error-output*)  ; => t",
             [](Interp& in, Args a, N) -> Value {
               return in.boolean(as_string_stream(a[0]) != nullptr || as_error_stream(a[0]) != nullptr);
             });
  TL_BUILTIN(in, "%string-output-stream-p", 1, 1, "(%string-output-stream-p X)",
             "True when X is a string output stream (streamp and output-stream-p use it)."
             "\n  (%string-output-stream-p (make-string-output-stream))  ; => t",
             [](Interp& in, Args a, N) -> Value { return in.boolean(as_string_stream(a[0]) != nullptr); });
  TL_BUILTIN(in, "%with-output-to-string", 2, 2, "(%with-output-to-string THUNK STREAM)",
             "Calls THUNK with the output going into STREAM, a string output stream, after what THUNK"
             " writes to STREAM itself, in order; returns the stream's text, which is then cleared (see"
             " with-output-to-string).",
             [](Interp& in, Args a, N) -> Value {
               arg_function(in, "with-output-to-string", a, 0);
               StringOutputStream* stream = as_string_stream(a[1]);
               if (stream == nullptr) in.type_error("with-output-to-string", 2, "a string output stream", a[1]);
               // Kept alive by the caller (the macro's variable holds it) while THUNK runs.
               struct Restore {
                 Interp& in;
                 StringOutputStream* stream;
                 std::string* output_text;
                 bool at_line_start;
                 ~Restore() {
                   stream->at_line_start = in.at_line_start;
                   in.output_text = output_text;
                   in.at_line_start = at_line_start;
                 }
               } restore{in, stream, in.output_text, in.at_line_start};
               in.output_text = &stream->text;
               in.at_line_start = stream->at_line_start;
               in.apply(a[0], nullptr, 0);
               std::string text = std::move(stream->text);
               stream->text.clear();
               return in.make_string(std::move(text));
             });
  TL_BUILTIN(in, "load", 1, 1, "(load PATH)",
             "Reads and evaluates every form of the file PATH; returns the last value."
             "\n  (progn (write-file \"/tmp/tl-doc-load.lisp\" \"(+ 1 2)\")"
             "\n         (load \"/tmp/tl-doc-load.lisp\"))  ; => 3",
             [](Interp& in, Args a, N) -> Value {
               std::string path = arg_string(in, "load", a, 0)->text;
               // A relative path is tried against the folder of the file being loaded first.
               if (!path.empty() && path[0] != '/' && !in.load_stack.empty()) {
                 std::string dir = in.load_stack.back();
                 dir = dir.substr(0, dir.find_last_of('/'));
                 std::ifstream probe(dir + "/" + path);
                 if (probe) path = dir + "/" + path;
               }
               return in.load_file(path);
             });
  TL_BUILTIN(in, "require", 1, 1, "(require 'NAME)",
             "Loads NAME.lisp once, searching the requiring file's folder, TENSORLISP_PATH, lisp/ and stdlib/ "
             "(a file being loaded, such as a script named NAME.lisp, is passed over)."
             "\n  (progn (provide 'doc-ex-require) (require 'doc-ex-require))  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               std::string name = module_name(in, a[0]);
               if (in.loaded_modules.count(name)) return nil();
               std::string path = in.find_module(name);
               if (path.empty()) {
                 in.error("file-error", "require: cannot find module " + name + " (looked for " + name +
                                            ".lisp next to the current file, in TENSORLISP_PATH, lisp/ and stdlib/)");
               }
               in.loaded_modules.insert(name);
               try {
                 in.load_file(path);
               } catch (...) {
                 in.loaded_modules.erase(name);
                 throw;
               }
               return in.t();
             });
  TL_BUILTIN(in, "provide", 1, 1, "(provide 'NAME)",
             "Marks module NAME as loaded."
             "\n  (provide 'doc-ex-provide)  ; => doc-ex-provide",
             [](Interp& in, Args a, N) -> Value {
               in.loaded_modules.insert(module_name(in, a[0]));
               return a[0];
             });
  TL_BUILTIN(in, "gc", 0, 0, "(gc)",
             "Runs the garbage collector now; returns the number of live objects."
             "\n  (integerp (gc))  ; => t",
             [](Interp& in, Args, N) -> Value {
               in.collect();
               return Value::integer(static_cast<std::int64_t>(in.heap.stats().objects));
             });
  TL_BUILTIN(in, "memory-limit", 0, 0, "(memory-limit)",
             "The most bytes the program may ask for at once: larger requests, and heap growth "
             "past it, are a storage-error. The default is the machine's physical memory."
             "\n  (> (memory-limit) (* 1024 1024))  ; => t",
             [](Interp& in, Args, N) -> Value { return Value::integer(static_cast<std::int64_t>(in.memory_limit())); });
  TL_BUILTIN(in, "set-memory-limit", 1, 1, "(set-memory-limit BYTES)",
             "Sets (memory-limit) to BYTES (at least 1 MiB); returns the previous limit."
             "\n  (let ((old (set-memory-limit (expt 2 32))))"
             "\n    (prog1 (memory-limit) (set-memory-limit old)))  ; => 4294967296",
             [](Interp& in, Args a, N) -> Value {
               std::int64_t bytes = arg_size(in, "set-memory-limit", a, 0);
               if (bytes < (std::int64_t{1} << 20)) {
                 in.type_error("set-memory-limit", 1, "at least 1048576 (1 MiB)", a[0]);
               }
               auto old = static_cast<std::int64_t>(in.memory_limit());
               in.set_memory_limit(static_cast<std::size_t>(bytes));
               return Value::integer(old);
             });
  TL_BUILTIN(in, "gc-stats", 0, 0, "(gc-stats)",
             "A plist (:objects :bytes :collections :allocated :held) describing the heap: live objects and their "
             "bytes (as of the last collection, plus what was allocated since), collections so far, bytes ever "
             "allocated, and the bytes outside the heap (tensor data) the live objects held at the last collection, "
             "an eighth of which the next collection waits for."
             "\n  (integerp (getf (gc-stats) :objects))  ; => t",
             [](Interp& in, Args, N) -> Value {
               HeapStats s = in.heap.stats();
               return in.list(
                   {Value::object(in.keyword("objects")), Value::integer(static_cast<std::int64_t>(s.objects)),
                    Value::object(in.keyword("bytes")), Value::integer(static_cast<std::int64_t>(s.bytes)),
                    Value::object(in.keyword("collections")), Value::integer(static_cast<std::int64_t>(s.collections)),
                    Value::object(in.keyword("allocated")),
                    Value::integer(static_cast<std::int64_t>(s.total_allocated)), Value::object(in.keyword("held")),
                    Value::integer(static_cast<std::int64_t>(s.held))});
             });
  TL_BUILTIN(in, "process-memory", 0, 0, "(process-memory)",
             "A plist (:rss :peak-rss) of this process's resident memory in bytes (Linux /proc; nil elsewhere)."
             "\n  (let ((m (process-memory))) (or (null m) (<= (getf m :rss) (getf m :peak-rss))))  ; => t",
             [](Interp& in, Args, N) -> Value {
               std::FILE* f = std::fopen("/proc/self/status", "r");
               if (f == nullptr) return nil();
               std::int64_t rss = -1, peak = -1;
               char line[256];
               while (std::fgets(line, sizeof line, f) != nullptr) {
                 long long kb = 0;
                 if (std::sscanf(line, "VmRSS: %lld kB", &kb) == 1) rss = kb * 1024;
                 if (std::sscanf(line, "VmHWM: %lld kB", &kb) == 1) peak = kb * 1024;
               }
               std::fclose(f);
               if (rss < 0) return nil();
               return in.list({Value::object(in.keyword("rss")), Value::integer(rss),
                               Value::object(in.keyword("peak-rss")), Value::integer(peak)});
             });
  TL_BUILTIN(in, "get-internal-real-time", 0, 0, "(get-internal-real-time)",
             "A monotonic clock in nanoseconds."
             "\n  (let ((t0 (get-internal-real-time))) (>= (- (get-internal-real-time) t0) 0))  ; => t",
             [](Interp&, Args, N) -> Value {
               auto now = std::chrono::steady_clock::now().time_since_epoch();
               return Value::integer(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count());
             });
  TL_BUILTIN(in, "getenv", 1, 1, "(getenv NAME)",
             "The environment variable NAME as a string, or nil."
             "\n  (or (getenv \"TLISP_DOC_UNSET_VARIABLE\") \"default\")  ; => \"default\"",
             [](Interp& in, Args a, N) -> Value {
               const char* v = std::getenv(arg_string(in, "getenv", a, 0)->text.c_str());
               return v ? in.make_string(v) : nil();
             });
  TL_BUILTIN(in, "read-file", 1, 1, "(read-file PATH)",
             "The contents of the file PATH as a string."
             "\n  (progn (write-file \"/tmp/tl-doc-read-file.txt\" \"line 1\")"
             "\n         (read-file \"/tmp/tl-doc-read-file.txt\"))  ; => \"line 1\"",
             [](Interp& in, Args a, N) -> Value {
               const std::string& path = arg_string(in, "read-file", a, 0)->text;
               std::ifstream f(path, std::ios::binary);
               if (!f) in.error("file-error", "read-file: cannot open \"" + path + "\"");
               std::stringstream ss;
               ss << f.rdbuf();
               return in.make_string(ss.str());
             });
  TL_BUILTIN(in, "write-file", 2, 2, "(write-file PATH STRING)",
             "Writes STRING to the file PATH (replacing it)."
             "\n  (write-file \"/tmp/tl-doc-write-file.txt\" \"hello\")  ; => \"hello\"",
             [](Interp& in, Args a, N) -> Value {
               const std::string& path = arg_string(in, "write-file", a, 0)->text;
               std::ofstream f(path, std::ios::binary);
               if (!f) in.error("file-error", "write-file: cannot open \"" + path + "\" for writing");
               f << arg_string(in, "write-file", a, 1)->text;
               return a[1];
             });
  TL_BUILTIN(in, "probe-file", 1, 1, "(probe-file PATH)",
             "True when a file or directory PATH exists."
             "\n  (progn (write-file \"/tmp/tl-doc-probe-file.txt\" \"\")"
             "\n         (probe-file \"/tmp/tl-doc-probe-file.txt\"))  ; => t"
             "\n  (probe-file \"/tmp/tl-doc-no-such-file.txt\")  ; => nil",
             [](Interp& in, Args a, N) -> Value {
               std::error_code ec;
               return in.boolean(std::filesystem::exists(arg_string(in, "probe-file", a, 0)->text, ec));
             });
  TL_BUILTIN(in, "file-size", 1, 1, "(file-size PATH)",
             "The size of the file PATH in bytes; a file-error when it does not exist or is a directory."
             "\n  (progn (write-file \"/tmp/tl-doc-file-size.txt\" \"four\")"
             "\n         (file-size \"/tmp/tl-doc-file-size.txt\"))  ; => 4",
             [](Interp& in, Args a, N) -> Value {
               const std::string& path = arg_string(in, "file-size", a, 0)->text;
               std::error_code ec;
               const auto size = std::filesystem::file_size(path, ec);
               if (ec) in.error("file-error", "file-size: \"" + path + "\": " + ec.message());
               return Value::integer(static_cast<std::int64_t>(size));
             });
  TL_BUILTIN(in, "delete-file", 1, 1, "(delete-file PATH)",
             "Deletes the file PATH and returns t; a file-error when it does not exist or cannot be deleted."
             "\n  (progn (write-file \"/tmp/tl-doc-delete-file.txt\" \"x\")"
             "\n         (delete-file \"/tmp/tl-doc-delete-file.txt\"))  ; => t",
             [](Interp& in, Args a, N) -> Value {
               const std::string& path = arg_string(in, "delete-file", a, 0)->text;
               std::error_code ec;
               if (std::filesystem::is_directory(path, ec)) {
                 in.error("file-error", "delete-file: \"" + path + "\" is a directory");
               }
               if (!std::filesystem::remove(path, ec)) {
                 in.error("file-error", "delete-file: cannot delete \"" + path + "\": " +
                                            (ec ? ec.message() : std::string("no such file")));
               }
               return in.boolean(true);
             });
  TL_BUILTIN(in, "ensure-directories-exist", 1, 1, "(ensure-directories-exist PATH)",
             "Creates the folders of PATH that are missing, as Common Lisp does: all of \"a/b/\", the folder part "
             "of \"a/b/c.txt\". Returns PATH; a file-error when a folder cannot be made.\n"
             "  (ensure-directories-exist \"/tmp/tensorlisp-doc/a/\")  ; => \"/tmp/tensorlisp-doc/a/\"",
             [](Interp& in, Args a, N) -> Value {
               const std::string& path = arg_string(in, "ensure-directories-exist", a, 0)->text;
               const std::filesystem::path dir = std::filesystem::path(path).parent_path();
               std::error_code ec;
               if (!dir.empty()) std::filesystem::create_directories(dir, ec);
               if (ec) {
                 in.error("file-error",
                          "ensure-directories-exist: cannot make \"" + dir.string() + "\": " + ec.message());
               }
               return a[0];
             });
  TL_BUILTIN(in, "read-line", 0, 0, "(read-line)", "One line from standard input without its newline, or nil at end of input.",
             [](Interp& in, Args, N) -> Value {
               std::string line;
               if (!std::getline(std::cin, line)) return nil();
               return in.make_string(std::move(line));
             });
  TL_BUILTIN(in, "exit", 0, 1, "(exit [CODE])",
             "Ends the program with exit status CODE (default 0) after unwinding."
             "\n  (if (< 1 2) :ok (exit 1))  ; => :ok",
             [](Interp& in, Args a, N n) -> Value {
               std::int64_t code = n == 1 ? arg_int(in, "exit", a, 0) : 0;
               tl::Error e(ErrorKind::User, "eval", "exit", std::to_string(code));
               (void)in;
               throw e;
             });
}

}  // namespace tl::eval
