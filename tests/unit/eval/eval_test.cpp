// SPDX-License-Identifier: Apache-2.0
// Unit tests for the evaluator: special forms, macros, tail calls, errors, and the builtins.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "../sanitizer.h"
#include "tensorlisp/tensorlisp.hpp"

namespace {

// The printed value of evaluating `source`.
std::string ev(tl::Interpreter& lisp, const std::string& source) {
  return lisp.eval(source).repr();
}

// The error that evaluating `source` raises.
tl::Error err(tl::Interpreter& lisp, const std::string& source) {
  try {
    lisp.eval(source);
  } catch (const tl::Error& e) {
    return e;
  }
  FAIL("no error from: " << source);
  throw std::logic_error("unreachable");
}

// Under TENSORLISP_GC_STRESS (collections every few bytes) long loops run 100 times shorter.
long scaled(long iterations) {
  const char* stress = std::getenv("TENSORLISP_GC_STRESS");
  bool on = stress != nullptr && std::strtoull(stress, nullptr, 10) > 0;
  return on ? iterations / 100 : iterations;
}

// AddressSanitizer makes C stack frames much larger, so recursion runs out of stack sooner.
constexpr int kRecursion = tl::test::kAddressSanitizer ? 300 : 10000;

}  // namespace

#define EV(src) ev(lisp, src)
#define ERR_TYPE(src) err(lisp, src).type()
#define ERR_MSG(src) err(lisp, src).message()

// --- special forms ---------------------------------------------------------------------------

TEST_CASE("eval: self-evaluating atoms and quote", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("42") == "42");
  CHECK(EV("-2.5") == "-2.5");
  CHECK(EV("\"str\"") == "\"str\"");
  CHECK(EV(":kw") == ":kw");
  CHECK(EV("t") == "t");
  CHECK(EV("nil") == "nil");
  CHECK(EV("(quote (a b c))") == "(a b c)");
  CHECK(EV("'sym") == "sym");
  CHECK(EV("''sym") == "'sym");
  CHECK(EV("'(1 (2 . 3) #(4))") == "(1 (2 . 3) #(4))");
  CHECK(ERR_TYPE("(quote)") == "program-error");
  CHECK(ERR_MSG("(quote a b)") == "quote: expected exactly one form");
  CHECK(ERR_TYPE("(5 1)") == "program-error");
  CHECK(ERR_MSG("(\"s\")") == "cannot call \"s\": it is not a function");
}

TEST_CASE("eval: quasiquote with unquote, splicing, dotted tails and nesting", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("(let ((x 1) (l '(2 3))) `(a ,x ,@l b))") == "(a 1 2 3 b)");
  CHECK(EV("`(1 ,@nil 2)") == "(1 2)");
  CHECK(EV("`(,@'(1 2))") == "(1 2)");
  CHECK(EV("(let ((l '(1 2))) `(,@l . tail))") == "(1 2 . tail)");
  CHECK(EV("`(a . ,(+ 1 2))") == "(a . 3)");
  CHECK(EV("`x") == "x");
  CHECK(EV("`5") == "5");
  CHECK(EV("`(a (b ,(+ 1 1)) c)") == "(a (b 2) c)");
  CHECK(EV("(let ((x 'y)) `(quote ,x))") == "'y");
  // Nested: the inner backquote stays, only the innermost-level comma is evaluated.
  CHECK(EV("`(a `(b ,(c ,(+ 1 2))))") == "(a `(b ,(c 3)))");
  CHECK(EV("(let ((x 'v)) `(1 `(2 ,,x)))") == "(1 `(2 ,v))");
  // Splicing copies: the spliced list is not modified by later changes to the result.
  CHECK(EV("(let* ((l (list 1 2)) (r `(,@l 3))) (setf (car r) 9) l)") == "(1 2)");
  // Backquoted vectors.
  CHECK(EV("`#(1 ,(+ 1 1))") == "#(1 2)");
  CHECK(EV("(let ((l '(2 3))) `#(1 ,@l 4))") == "#(1 2 3 4)");
  CHECK(EV("`#(a b)") == "#(a b)");
  CHECK(ERR_MSG(",x") == "unquote: comma outside a backquote");
  CHECK(ERR_TYPE(",@x") == "program-error");
}

TEST_CASE("eval: if, progn, and, or, while", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("(if t 1 2)") == "1");
  CHECK(EV("(if nil 1 2)") == "2");
  CHECK(EV("(if nil 1)") == "nil");
  CHECK(EV("(if 0 :zero-is-true :no)") == ":zero-is-true");
  CHECK(EV("(if '() :yes :empty-list-is-false)") == ":empty-list-is-false");
  CHECK(ERR_MSG("(if)") == "if: expected (if TEST THEN [ELSE]), got 0 forms");
  CHECK(ERR_TYPE("(if 1 2 3 4)") == "program-error");
  CHECK(EV("(progn)") == "nil");
  CHECK(EV("(progn 1 2 3)") == "3");
  CHECK(EV("(and)") == "t");
  CHECK(EV("(and 1 2)") == "2");
  CHECK(EV("(and 1 nil (car 5))") == "nil");  // short-circuits
  CHECK(EV("(or)") == "nil");
  CHECK(EV("(or nil 3 (car 5))") == "3");
  CHECK(EV("(or nil nil)") == "nil");
  CHECK(EV("(let ((n 0) (s 0)) (while (< n 5) (setq s (+ s n)) (setq n (+ n 1))) (list n s))") ==
        "(5 10)");
  CHECK(EV("(while nil 1)") == "nil");
}

TEST_CASE("eval: let, let*, setq and lexical scope", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("(let ((x 1) (y 2)) (let ((x y) (y x)) (list x y)))") == "(2 1)");
  CHECK(EV("(let* ((x 1) (y (+ x 1)) (x (* y 10))) (list x y))") == "(20 2)");
  CHECK(EV("(let (a (b) (c 3)) (list a b c))") == "(nil nil 3)");
  CHECK(EV("(let () 5)") == "5");
  CHECK(EV("(let ((x 1)) (setq x 5) x)") == "5");
  CHECK(EV("(let ((x 1) (y 2)) (setq x 10 y (+ x 1)) (list x y))") == "(10 11)");
  CHECK(EV("(setq)") == "nil");
  CHECK(EV("(progn (setq global-from-setq 7) global-from-setq)") == "7");
  CHECK(EV("(let ((x 1)) (let ((f (lambda () x))) (let ((x 2)) (funcall f))))") == "1");
  CHECK(ERR_MSG("(setq a 1 b)") ==
        "setq: expected pairs of VARIABLE VALUE, got an odd number of forms");
  CHECK(ERR_MSG("(setq t 1)") == "setq: cannot assign to the constant t");
  CHECK(ERR_TYPE("(setq 5 1)") == "program-error");
  CHECK(ERR_TYPE("(setq :k 1)") == "program-error");
  CHECK(ERR_MSG("(setq :k 1)") == "setq: cannot assign to the constant :k");
  CHECK(ERR_MSG("(let ((t 1)) t)") == "let: cannot bind t, not a variable name");
  CHECK(ERR_TYPE("(let ((:k 1)) 1)") == "program-error");
  CHECK(ERR_TYPE("(let ((x 1 2)) x)") == "program-error");
  CHECK(ERR_TYPE("(let x 1)") == "program-error");
  CHECK(ERR_TYPE("(let* ((5 1)) 1)") == "program-error");
}

TEST_CASE("eval: lambda lists with &optional, &rest, &key, &aux", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("((lambda (a &optional (b 10 b-p) c) (list a b b-p c)) 1)") == "(1 10 nil nil)");
  CHECK(EV("((lambda (a &optional (b 10 b-p) c) (list a b b-p c)) 1 2 3)") == "(1 2 t 3)");
  CHECK(EV("((lambda (a &optional (b (* a 2))) b) 4)") == "8");  // defaults see earlier params
  CHECK(EV("((lambda (&optional x) x))") == "nil");
  CHECK(EV("((lambda (a &rest r) (list a r)) 1 2 3)") == "(1 (2 3))");
  CHECK(EV("((lambda (a &rest r) (list a r)) 1)") == "(1 nil)");
  CHECK(EV("((lambda (a &body r) r) 1 2)") == "(2)");
  CHECK(EV("((lambda (a . r) r) 1 2 3)") == "(2 3)");
  CHECK(EV("((lambda (&key (x 1 x-p) y) (list x x-p y)) :y 2)") == "(1 nil 2)");
  CHECK(EV("((lambda (&key (x 1 x-p) y) (list x x-p y)) :x 5)") == "(5 t nil)");
  CHECK(EV("((lambda (&key a b) (list a b)) :b 2 :a 1)") == "(1 2)");
  CHECK(EV("((lambda (&key a) a) :a 1 :a 2)") == "1");  // the first occurrence wins
  CHECK(EV("((lambda (&key ((:foo bar) 7)) bar) :foo 8)") == "8");
  CHECK(EV("((lambda (&key ((:foo bar) 7)) bar))") == "7");
  CHECK(EV("((lambda (&key (a 1) (b (+ a 1))) (list a b)) :a 5)") == "(5 6)");
  CHECK(EV("((lambda (&rest r &key x) (list r x)) :x 1)") == "((:x 1) 1)");
  CHECK(EV("((lambda (&key x &allow-other-keys) x) :z 1 :x 3)") == "3");
  CHECK(EV("((lambda (&key x) x) :z 1 :allow-other-keys t)") == "nil");
  CHECK(EV("((lambda (x &aux (y (* x 2)) z) (list y z)) 3)") == "(6 nil)");
  CHECK(EV("((lambda (a &optional b &key c) (list a b c)) 1 2 :c 3)") == "(1 2 3)");
  CHECK(ERR_MSG("((lambda (&key x) x) :z 1)") ==
        "lambda: unknown keyword argument :z; expected one of :x");
  CHECK(ERR_MSG("((lambda (&key x) x) :x)") ==
        "lambda: keyword arguments must come in pairs, got an odd number");
  CHECK(ERR_TYPE("(lambda (1) 1)") == "program-error");
  CHECK(ERR_MSG("(lambda (a &rest) a)") == "lambda: &rest (or &body) must be followed by a variable");
  CHECK(ERR_MSG("(lambda (&rest a b) 1)") == "lambda: only one parameter may follow &rest");
  CHECK(ERR_MSG("(lambda x 1)") ==
        "lambda: the parameter list must be a list, got x");
}

TEST_CASE("eval: defun with docstrings, implicit block, and redefinition", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("(defun add (a b) \"Adds A and B.\" (+ a b))") == "add");
  CHECK(EV("(add 2 3)") == "5");
  CHECK(EV("(documentation 'add)") == "\"Adds A and B.\"");
  // A lone string is the body, not a docstring.
  CHECK(EV("(defun just-string () \"value\")") == "just-string");
  CHECK(EV("(just-string)") == "\"value\"");
  CHECK(EV("(documentation 'just-string)") == "nil");
  CHECK(EV("(defun early (x) (when (> x 0) (return-from early :positive)) :other)") == "early");
  CHECK(EV("(list (early 1) (early -1))") == "(:positive :other)");
  lisp.eval("(defun add (a b) (* a b))");
  CHECK(EV("(add 2 3)") == "6");
  CHECK(EV("(let ((x 1)) (defun get-x () x)) (get-x)") == "1");
  CHECK(ERR_MSG("(defun t () 1)") == "defun: cannot redefine the constant t");
  CHECK(ERR_TYPE("(defun nil () 1)") == "type-error");
  // Redefining a builtin used by inline arithmetic takes effect.
  tl::Interpreter other;
  other.eval("(defun + (a b) (list :plus a b))");
  CHECK(other.eval("(+ 1 2)").repr() == "(:plus 1 2)");
  CHECK(other.eval("(let ((x 1)) (+ x 2))").repr() == "(:plus 1 2)");
}

TEST_CASE("eval: labels, flet and letrec", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("(labels ((fact (n) (if (<= n 1) 1 (* n (fact (- n 1)))))) (fact 20))") ==
        "2432902008176640000");
  CHECK(EV("(labels ((ev? (n) (if (= n 0) t (od? (- n 1))))"
           "         (od? (n) (if (= n 0) nil (ev? (- n 1)))))"
           "  (list (ev? 10) (od? 7) (ev? 7)))") == "(t t nil)");
  CHECK(EV("(let ((x 10)) (flet ((f () x)) (let ((x 20)) (f))))") == "10");
  CHECK(EV("(flet ((f (x) (* x 2)) (g (x) (+ x 1))) (list (f 4) (g 4)))") == "(8 5)");
  CHECK(EV("(letrec ((f (lambda (n) (if (= n 0) 0 (+ 1 (g (- n 1))))))"
           "         (g (lambda (n) (f n))))"
           "  (f 5))") == "5");
}

TEST_CASE("eval: block and return-from", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("(block b (return-from b 5) 6)") == "5");
  CHECK(EV("(block b 1 2)") == "2");
  CHECK(EV("(block b (return-from b))") == "nil");
  CHECK(EV("(block nil (return 7) 8)") == "7");
  CHECK(EV("(block outer (block inner (return-from outer :o)) :after-inner)") == ":o");
  CHECK(EV("(block outer (block inner (return-from inner :i)) :after-inner)") == ":after-inner");
  // From inside a closure called by a builtin.
  lisp.eval("(defun first-even (l)"
            "  (mapc (lambda (x) (when (evenp x) (return-from first-even x))) l) :none)");
  CHECK(EV("(list (first-even '(1 3 4 5)) (first-even '(1)))") == "(4 :none)");
  CHECK(ERR_MSG("(return-from nope 1)") == "return-from: no enclosing block named nope");
  CHECK(ERR_TYPE("(return 1)") == "program-error");
  // Returning to a block that has already been exited.
  tl::Error exited = err(lisp, "(funcall (block b (lambda () (return-from b 1))))");
  CHECK(exited.type() == "control-error");
  CHECK_THAT(exited.message(), Catch::Contains("the block has already been exited"));
  CHECK(EV("(handler-case (funcall (block b (lambda () (return-from b 1))))"
           "  (control-error () :caught))") == ":caught");
  // return-from in a closure leaves the activation that made the closure, even when another
  // activation of the same function is running.
  lisp.eval("(defun f (n g) (if (= n 0) (funcall g)"
            "  (progn (f 0 (lambda () (return-from f :outer))) :not-returned)))");
  CHECK(EV("(f 1 nil)") == ":outer");
  lisp.eval("(defun walk (n) (block here (if (= n 0) (list :bottom)"
            "  (cons n (walk (- n 1))))))");
  CHECK(EV("(walk 3)") == "(3 2 1 :bottom)");
}

TEST_CASE("eval: unwind-protect runs cleanups on normal exit, errors and return-from",
          "[eval]") {
  tl::Interpreter lisp;
  lisp.eval("(defvar *log* nil)");
  CHECK(EV("(let ((n 0)) (list (unwind-protect (progn (setq n 1) :body) (setq n 2)) n))") ==
        "(:body 2)");
  CHECK(EV("(list (handler-case (unwind-protect (car 5) (push :cleanup *log*))"
           "        (type-error (e) (condition-type e)))"
           "      *log*)") == "(type-error (:cleanup))");
  lisp.eval("(setq *log* nil)");
  CHECK(EV("(list (block b (unwind-protect (return-from b 1) (push :cleaned *log*))) *log*)") ==
        "(1 (:cleaned))");
  CHECK(EV("(let ((log nil))"
           "  (block outer"
           "    (unwind-protect"
           "      (unwind-protect (return-from outer 1) (push :inner log))"
           "      (push :outer log)))"
           "  log)") == "(:outer :inner)");
  lisp.eval("(setq *log* nil)");
  lisp.eval("(defun leave (x) (unwind-protect (if x (return-from leave :early) :late)"
            "  (push x *log*)))");
  CHECK(EV("(list (leave 1) (leave nil) *log*)") == "(:early :late (nil 1))");
  // An error in the cleanup replaces the original one.
  CHECK(EV("(handler-case (unwind-protect (error \"a\") (error \"b\"))"
           "  (error (e) (condition-message e)))") == "\"b\"");
  CHECK(EV("(block b (unwind-protect (return-from b 1) (return-from b 2)))") == "2");
  // The cleanup runs when the error goes all the way out to the host.
  lisp.eval("(setq *log* nil)");
  CHECK(err(lisp, "(unwind-protect (/ 1 0) (push :host *log*))").type() == "division-by-zero");
  CHECK(EV("*log*") == "(:host)");
}

TEST_CASE("eval: handler-case with condition types and subtypes", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("(handler-case (car 5) (error (e) (list (condition-type e) (condition-message e))))") ==
        "(type-error \"car: argument 1 must be a list, got 5 (integer)\")");
  CHECK(EV("(handler-case 5 (error () 6))") == "5");
  CHECK(EV("(handler-case (/ 1 0) (type-error () :te) (division-by-zero () :dz))") == ":dz");
  CHECK(EV("(handler-case (/ 1 0) (arithmetic-error (e) (condition-type e)))") ==
        "division-by-zero");
  CHECK(EV("(handler-case (/ 1 0) ((or type-error division-by-zero) () :either))") == ":either");
  CHECK(EV("(handler-case (error \"x\") (condition () :c))") == ":c");
  CHECK(EV("(handler-case (error \"x\") (t () :t))") == ":t");
  CHECK(EV("(handler-case (+ 1 most-positive-fixnum) (integer-overflow () :ov))") == ":ov");
  CHECK(EV("(handler-case (foo-undefined) (undefined-function () :uf))") == ":uf");
  CHECK(EV("(handler-case undefined-var (unbound-variable () :uv))") == ":uv");
  CHECK(EV("(handler-case ((lambda (x) x)) (program-error (e) (condition-type e)))") ==
        "arity-error");
  CHECK(EV("(handler-case (aref (vector) 0) (index-error () :ix))") == ":ix");
  // The first matching clause wins; clauses are tried in order.
  CHECK(EV("(handler-case (car 5) (error () :first) (type-error () :second))") == ":first");
  // Unmatched conditions pass through to the host with their location.
  tl::Error e = err(lisp, "(handler-case (car 5) (division-by-zero () :dz))");
  CHECK(e.type() == "type-error");
  CHECK(e.location().column == 15);
  // Nested handlers: the inner one is tried first; a handler may signal a new error.
  CHECK(EV("(handler-case (handler-case (/ 1 0) (type-error () :inner))"
           "  (division-by-zero () :outer))") == ":outer");
  CHECK(EV("(handler-case"
           "  (handler-case (car 1) (type-error (e) (error \"again: ~a\" (condition-type e))))"
           "  (simple-error (e) (condition-message e)))") == "\"again: type-error\"");
  // The handler sees side effects of the body.
  CHECK(EV("(let ((x 1)) (handler-case (progn (setq x 2) (car 5)) (error () x)))") == "2");
  // Errors from deep inside function calls.
  lisp.eval("(defun thrower () (error \"deep\")) (defun mid () (list (thrower)))");
  CHECK(EV("(handler-case (mid) (error (e) (condition-message e)))") == "\"deep\"");
  CHECK(EV("(ignore-errors (car 1))") == "nil");
  CHECK(EV("(ignore-errors (+ 1 2))") == "3");
  CHECK(EV("(condition-type-p (handler-case (/ 1 0) (error (e) e)) 'arithmetic-error)") == "t");
  CHECK(EV("(condition-type-p (handler-case (/ 1 0) (error (e) e)) 'type-error)") == "nil");
  CHECK(EV("(handler-case (car 5) (error (e) (condition-location e)))") == "\"<eval>:1:15\"");
  CHECK(EV("(handler-case (error \"oops\") (error (e) (condition-location e)))") ==
        "\"<eval>:1:15\"");
  CHECK(EV("(conditionp (handler-case (error \"oops\") (error (e) e)))") == "t");
  CHECK(ERR_TYPE("(handler-case 1 (5 () 1))") == "program-error");
  CHECK(ERR_TYPE("(handler-case 1 (error (a b) 1))") == "program-error");
}

TEST_CASE("eval: define-condition, error with format arguments, make-condition", "[eval]") {
  tl::Interpreter lisp;
  lisp.eval("(define-condition my-error (error))");
  lisp.eval("(define-condition my-sub (my-error))");
  CHECK(EV("(handler-case (error 'my-sub \"bad ~a\" 42)"
           "  (my-error (e) (list (condition-type e) (condition-message e))))") ==
        "(my-sub \"bad 42\")");
  CHECK(EV("(handler-case (error 'my-sub \"x\") (error () :generic))") == ":generic");
  CHECK(EV("(handler-case (error 'my-error \"x\") (my-sub () :wrong) (my-error () :right))") ==
        ":right");
  CHECK(EV("(handler-case (error \"x=~a y=~s\" 1 \"s\")"
           "  (simple-error (e) (condition-message e)))") ==
        "\"x=1 y=\\\"s\\\"\"");
  tl::Error plain = err(lisp, "(error \"plain ~d\" 3)");
  CHECK(plain.type() == "simple-error");
  CHECK(plain.message() == "plain 3");
  tl::Error mine = err(lisp, "(error 'my-error \"m\")");
  CHECK(mine.type() == "my-error");
  CHECK_THAT(mine.message(), Catch::EndsWith("m"));
  // Without a message the type name is the message; extra arguments become data.
  CHECK(EV("(handler-case (error 'my-error) (error (e) (condition-message e)))") ==
        "\"my-error\"");
  CHECK(EV("(handler-case (error 'type-error :a 1) (error (e) (list (condition-message e)"
           " (condition-data e))))") == "(\"type-error\" (:a 1))");
  CHECK(EV("(handler-case (error (make-condition 'type-error :message \"hi\" :data 3))"
           "  (type-error (e) (list (condition-message e) (condition-data e))))") ==
        "(\"hi\" 3)");
  CHECK(EV("(conditionp (make-condition 'my-error))") == "t");
  CHECK(EV("(condition-type (make-condition 'my-sub))") == "my-sub");
  CHECK(ERR_MSG("(error 'nonexistent \"m\")") ==
        "error: unknown condition type nonexistent (define it with define-condition)");
  CHECK(ERR_MSG("(define-condition c1 (nope))") ==
        "define-condition: unknown parent condition type nope");
  CHECK(ERR_TYPE("(make-condition 'nope)") == "program-error");
  CHECK(ERR_TYPE("(error 5)") == "type-error");
  CHECK(ERR_MSG("(error \"~a\")") ==
        "format: not enough arguments for directive ~a in \"~a\"");
  // A user condition defined without a parent is a condition, not an error (as in CL).
  lisp.eval("(define-condition orphan ())");
  CHECK(EV("(handler-case (error 'orphan) (error () :is-error) (condition () :is-condition))") ==
        ":is-condition");
  CHECK(EV("(handler-case (assert (= 1 2)) (assertion-error (e) (condition-message e)))") ==
        "\"assertion failed: (= 1 2)\"");
  CHECK(EV("(handler-case (assert nil \"custom ~a\" 1)"
           "  (assertion-error (e) (condition-message e)))") ==
        "\"custom 1\"");
  CHECK(EV("(assert t)") == "nil");
  CHECK(ERR_TYPE("(let ((x 5)) (check-type x string))") == "type-error");
  CHECK(EV("(let ((x \"s\")) (check-type x string))") == "nil");
}

TEST_CASE("eval: macros, macroexpand and macroexpand-1", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("(defmacro my-inc (x) `(+ ,x 1))") == "my-inc");
  CHECK(EV("(my-inc 5)") == "6");
  CHECK(EV("(macroexpand-1 '(my-inc y))") == "(+ y 1)");
  lisp.eval("(defmacro m2 (x) `(m1 ,x)) (defmacro m1 (x) `(car ,x))");
  CHECK(EV("(macroexpand-1 '(m2 z))") == "(m1 z)");
  CHECK(EV("(macroexpand '(m2 z))") == "(car z)");
  CHECK(EV("(macroexpand '(not-a-macro 1))") == "(not-a-macro 1)");
  CHECK(EV("(macroexpand 5)") == "5");
  CHECK(EV("(m2 '(7 8))") == "7");
  // Destructuring parameters, &body, docstrings.
  lisp.eval("(defmacro with-x ((v init) &body body) \"Binds V.\" `(let ((,v ,init)) ,@body))");
  CHECK(EV("(with-x (a 5) (* a 2))") == "10");
  CHECK(EV("(documentation 'with-x)") == "\"Binds V.\"");
  CHECK(EV("(macrop (symbol-value 'with-x))") == "t");
  CHECK(EV("(fboundp 'with-x)") == "t");
  // A macro defined in one top-level form is usable in the next form of the same text.
  CHECK(EV("(progn (defmacro twice (x) `(progn ,x ,x))"
           "  (let ((n 0)) (twice (setq n (+ n 1))) n))") ==
        "2");
  // Hygiene with gensym.
  lisp.eval("(defmacro my-swap (a b)"
            "  (let ((tmp (gensym))) `(let ((,tmp ,a)) (setq ,a ,b) (setq ,b ,tmp))))");
  CHECK(EV("(let ((tmp 1) (other 2)) (my-swap tmp other) (list tmp other))") == "(2 1)");
  // Errors inside a macro's expander mention the macro.
  lisp.eval("(defmacro bad () (car 5))");
  tl::Error e = err(lisp, "(list (bad))");
  CHECK(e.type() == "type-error");
  CHECK_THAT(e.message(), Catch::EndsWith("(while expanding macro bad)"));
  CHECK(ERR_TYPE("(defmacro 5 () 1)") == "type-error");
}

TEST_CASE("eval: special variables with defvar, defparameter and dynamic let", "[eval]") {
  tl::Interpreter lisp;
  lisp.eval("(defvar *d* 1)");
  lisp.eval("(defun get-d () *d*)");
  CHECK(EV("(list (let ((*d* 2)) (get-d)) (get-d))") == "(2 1)");
  CHECK(EV("(let ((*d* 2)) (let ((*d* 3)) (get-d)))") == "3");
  // let* binds sequentially: later init forms see the new dynamic value.
  CHECK(EV("(let* ((*d* 5) (y (get-d))) y)") == "5");
  CHECK(EV("(let* ((*d* 5) (y *d*)) y)") == "5");
  CHECK(EV("(let* ((*d* 5) (y 6)) (list (get-d) y))") == "(5 6)");
  // A function parameter named like a special variable binds it dynamically.
  lisp.eval("(defun with-param (*d*) (get-d))");
  CHECK(EV("(list (with-param 42) *d*)") == "(42 1)");
  // setq inside the dynamic binding changes only the binding.
  CHECK(EV("(let ((*d* 2)) (setq *d* 3) (get-d))") == "3");
  CHECK(EV("*d*") == "1");
  // The binding is undone when an error unwinds through it.
  CHECK(EV("(handler-case (let ((*d* 2)) (error \"x\")) (error () (get-d)))") == "1");
  // defvar does not overwrite; defparameter does.
  lisp.eval("(defvar *d* 100)");
  CHECK(EV("*d*") == "1");
  lisp.eval("(defparameter *p* 1) (defparameter *p* 2)");
  CHECK(EV("*p*") == "2");
  CHECK(EV("(progn (defvar *with-doc* 3 \"Doc of it.\") (documentation '*with-doc*))") ==
        "\"Doc of it.\"");
  // Closures do not capture dynamic bindings.
  CHECK(EV("(let ((f (let ((*d* 50)) (lambda () *d*)))) (funcall f))") == "1");
  CHECK(EV("(boundp '*d*)") == "t");
  CHECK(EV("(boundp 'never-defined-var)") == "nil");
  // defvar without a value declares the variable special but leaves it unbound.
  CHECK(EV("(progn (defvar *declared-only*) (boundp '*declared-only*))") == "nil");
  CHECK(EV("(symbol-value '*d*)") == "1");
  CHECK(EV("(progn (set 'set-var 5) set-var)") == "5");
  CHECK(EV("(progn (defvar *mu* 1) (makunbound '*mu*) (boundp '*mu*))") == "nil");
  CHECK(ERR_TYPE("(symbol-value 'never-defined-var)") == "unbound-variable");
  lisp.eval("(defconstant +c+ 5)");
  CHECK(EV("+c+") == "5");
  CHECK(ERR_MSG("(setq +c+ 6)") == "setq: cannot assign to the constant +c+");
  CHECK(EV("(defconstant +c+ 5)") == "+c+");
  CHECK(ERR_MSG("(defconstant +c+ 6)") ==
        "defconstant: +c+ is already a constant with another value");
  CHECK(ERR_TYPE("(let ((+c+ 1)) +c+)") == "program-error");
}

// --- tail calls and recursion limits --------------------------------------------------------

TEST_CASE("eval: a ten-million-iteration tail-recursive loop finishes", "[eval][tail]") {
  tl::Interpreter lisp;
  lisp.eval("(defun loop-n (n acc) (if (= n 0) acc (loop-n (- n 1) (+ acc 1))))");
  long n = scaled(10000000);
  CHECK(lisp.eval("(loop-n " + std::to_string(n) + " 0)").as_int() == n);
}

TEST_CASE("eval: tail calls in every tail position run in constant stack", "[eval][tail]") {
  tl::Interpreter lisp;
  const long m = scaled(1000000);
  const std::string n = std::to_string(m);
  lisp.eval("(defun ev? (n) (if (= n 0) t (od? (- n 1))))"
            "(defun od? (n) (if (= n 0) nil (ev? (- n 1))))");
  CHECK(EV("(list (ev? " + n + ") (od? " + std::to_string(m + 1) + "))") == "(t t)");
  CHECK(EV("(labels ((a (n) (if (= n 0) :a (b (- n 1)))) (b (n) (a n))) (a " + n + "))") == ":a");
  lisp.eval("(defun c (n) (cond ((= n 0) :done) (t (c (- n 1)))))");
  CHECK(EV("(c " + n + ")") == ":done");
  lisp.eval("(defun o (n) (or (= n 0) (o (- n 1))))");
  CHECK(EV("(o " + n + ")") == "t");
  lisp.eval("(defun a (n) (and t (if (= n 0) :done (a (- n 1)))))");
  CHECK(EV("(a " + n + ")") == ":done");
  lisp.eval("(defun w (n) (when (> n 0) (w (- n 1))))");
  CHECK(EV("(w " + n + ")") == "nil");
  lisp.eval("(defun lt (n) (let ((m (- n 1))) (if (< m 0) :done (lt m))))");
  CHECK(EV("(lt " + n + ")") == ":done");
  lisp.eval("(defun fc (n) (if (= n 0) :done (funcall #'fc (- n 1))))");
  CHECK(EV("(fc " + n + ")") == ":done");
  lisp.eval("(defun ap (n) (if (= n 0) :done (apply #'ap (list (- n 1)))))");
  CHECK(EV("(ap " + n + ")") == ":done");
  lisp.eval("(defun kw (n &key (acc 0)) (if (= n 0) acc (kw (- n 1) :acc (+ acc 1))))");
  CHECK(EV("(kw " + n + ")") == n);
  lisp.eval("(defun opt (n &optional (acc 0)) (if (= n 0) acc (opt (- n 1) (+ acc 2))))");
  CHECK(EV("(opt " + n + ")") == std::to_string(2 * m));
}

TEST_CASE("eval: deep non-tail recursion is a stack-overflow error, and the interpreter "
          "survives",
          "[eval][tail]") {
  tl::Interpreter lisp;
  lisp.eval("(defun deep (n) (if (= n 0) 0 (+ 1 (deep (- n 1)))))");
  const std::string depth = std::to_string(kRecursion);
  CHECK(lisp.eval("(deep " + depth + ")").as_int() == kRecursion);
  tl::Error e = err(lisp, "(deep 100000000)");
  CHECK(e.type() == "stack-overflow");
  CHECK(e.kind() == tl::ErrorKind::User);
  CHECK_THAT(e.message(), Catch::StartsWith("stack overflow (recursion too deep;"));
  CHECK(e.location().line == 1);
  CHECK(e.location().column > 1);
  CHECK_FALSE(e.backtrace().empty());
  CHECK_THAT(e.backtrace().front(), Catch::StartsWith("in deep called at"));
  CHECK(lisp.eval("(deep 100)").as_int() == 100);
  // Through builtins that call back (mapcar, apply) too.
  lisp.eval("(defun deep2 (n) (if (= n 0) 0 (+ 1 (car (mapcar #'deep2 (list (- n 1)))))))");
  CHECK(err(lisp, "(deep2 100000000)").type() == "stack-overflow");
  CHECK(lisp.eval("(deep2 50)").as_int() == 50);
  // handler-case catches it as an error.
  CHECK(EV("(handler-case (deep 100000000) (stack-overflow () :caught))") == ":caught");
  CHECK(EV("(handler-case (deep 100000000) (error (e) (condition-type e)))") == "stack-overflow");
  CHECK(lisp.eval("(deep " + depth + ")").as_int() == kRecursion);
  // Long lists are fine to build, compare, hash and print.
  CHECK(EV("(length (let ((l nil)) (dotimes (i 100000) (push i l)) l))") == "100000");
  CHECK(EV("(equal (range 100000) (range 100000))") == "t");
}

TEST_CASE("eval: moderately deep nesting of code and data works", "[eval][tail]") {
  tl::Interpreter lisp;
  // Code nested thousands of levels deep (fewer under AddressSanitizer), from source and built
  // at run time.
  const int levels = kRecursion / 2;
  const std::string n = std::to_string(levels);
  std::string code = "(progn ";
  for (int i = 0; i < levels; ++i) code += "(list ";
  code += "1";
  code += std::string(static_cast<std::size_t>(levels), ')');
  code += " :ok)";
  CHECK(EV(code) == ":ok");
  CHECK(EV("(let ((f 1)) (dotimes (i " + n + ") (setq f (list 'list f)))"
           " (let ((r (eval f)) (depth 0)) (while (consp r) (setq r (car r) depth (+ depth 1)))"
           " (list depth r)))") == "(" + n + " 1)");
  // Data nested as deeply in the car direction.
  lisp.eval("(defun nest (n) (let ((x nil)) (dotimes (i n) (setq x (list x))) x))");
  CHECK(EV("(equal (nest " + n + ") (nest " + n + "))") == "t");
  CHECK(EV("(equal (nest " + n + ") (nest 10))") == "nil");
  CHECK(EV("(let ((h (make-hash-table))) (setf (gethash (nest " + n + ") h) :deep)"
           " (gethash (nest " + n + ") h))") == ":deep");
  // The printer cuts very deep nesting short instead of recursing without bound.
  std::string printed = lisp.eval("(prin1-to-string (nest 100000))").as_string();
  CHECK(printed.size() < 10000);
  CHECK(printed.find("...") != std::string::npos);
  // Deep structures: the analyzer checks the C stack, equal and hashing need none
  // (regressions, issue #2: each used to crash).
  lisp.eval("(defun nest (n) (let ((x nil)) (dotimes (i n) (setq x (list x))) x))");
  CHECK(EV("(equal (nest 1000000) (nest 1000000))") == "t");
  CHECK(EV("(equal (nest 1000000) (nest 999999))") == "nil");
  CHECK(EV("(let ((h (make-hash-table))) (setf (gethash (nest 1000000) h) 1) (gethash (nest 1000000) h))") == "1");
  CHECK(ERR_MSG("(eval (let ((f 1)) (dotimes (i 1000000) (setq f (list 'list f))) f))") ==
        "form nested too deeply to compile");
}

// --- errors -----------------------------------------------------------------------------------

TEST_CASE("eval: arity errors", "[eval][errors]") {
  tl::Interpreter lisp;
  lisp.eval("(defun one (a) a) (defun opt (a &optional b) a) (defun rst (a &rest r) a)");
  CHECK(ERR_TYPE("(one)") == "arity-error");
  CHECK(ERR_MSG("(one 1 2)") == "one: expected 1 argument, got 2");
  CHECK(ERR_MSG("(opt)") == "opt: expected 1 to 2 arguments, got 0");
  CHECK(ERR_MSG("(opt 1 2 3)") == "opt: expected 1 to 2 arguments, got 3");
  CHECK(ERR_TYPE("(rst)") == "arity-error");
  CHECK(EV("(rst 1 2 3 4 5)") == "1");
  CHECK(ERR_MSG("(car 1 2)") == "car: expected 1 argument, got 2");
  CHECK(ERR_MSG("(cons 1)") == "cons: expected 2 arguments, got 1");
  CHECK(ERR_MSG("((lambda (a b) a) 1)") == "lambda: expected 2 arguments, got 1");
  CHECK(ERR_TYPE("(mapcar (lambda (a b) a) '(1))") == "arity-error");
  CHECK(ERR_TYPE("(funcall #'one)") == "arity-error");
  CHECK(ERR_TYPE("(apply #'one 1 '(2))") == "arity-error");
  CHECK(ERR_MSG("(max)") == "max: expected at least 1 argument, got 0");
  tl::Error e = err(lisp, "(list 1\n  (one 1 2))");
  CHECK(e.location().line == 2);
  CHECK(e.location().column == 3);
}

TEST_CASE("eval: type errors name the function and the argument", "[eval][errors]") {
  tl::Interpreter lisp;
  CHECK(ERR_MSG("(car 5)") == "car: argument 1 must be a list, got 5 (integer)");
  CHECK(ERR_MSG("(+ 1 \"a\")") == "+: argument 2 must be a number, got \"a\" (string)");
  CHECK(ERR_MSG("(< 1 'x)") == "<: argument 2 must be a number, got x (symbol)");
  CHECK(ERR_MSG("(string-upcase 5)") == "string-upcase: argument 1 must be a string, got 5 "
                                        "(integer)");
  CHECK(ERR_MSG("(gethash 1 2)") == "gethash: argument 2 must be a hash table, got 2 (integer)");
  CHECK(ERR_MSG("(length 5)") == "length: argument 1 must be a sequence, got 5 (integer)");
  // A symbol naming a global function is a function designator, as in Common Lisp (issue 25).
  CHECK(EV("(mapcar 'car '((1)))") == "(1)");
  CHECK(ERR_MSG("(mapcar 'no-such-function '((1)))") ==
        "mapcar: argument 1 must be a function, got no-such-function (symbol)");
  CHECK(ERR_MSG("(length '(1 . 2))") ==
        "length: argument 1 must be a proper list, got (1 . 2) (cons)");
  CHECK(ERR_MSG("(funcall 5)") == "cannot call 5: it is not a function");
  CHECK(ERR_TYPE("(let ((f 5)) (funcall f))") == "type-error");
  CHECK(ERR_MSG("(apply #'+ 1 2)") == "apply: argument 3 must be a proper list, got 2 (integer)");
  // Long values are shortened in the message.
  std::string msg = ERR_MSG("(car (make-vector 100 12345))");
  CHECK_THAT(msg, Catch::StartsWith("car: argument 1 must be a list, got #(12345 12345"));
  CHECK_THAT(msg, Catch::EndsWith("... (vector)"));
  // The inline arithmetic path reports the same errors.
  CHECK(ERR_MSG("(let ((x \"a\")) (+ x 1))") ==
        "+: argument 1 must be a number, got \"a\" (string)");
  CHECK(ERR_MSG("(let ((x nil)) (< x 1))") == "<: argument 1 must be a number, got nil (null)");
}

TEST_CASE("eval: arithmetic errors: division by zero and integer overflow", "[eval][errors]") {
  tl::Interpreter lisp;
  CHECK(ERR_MSG("(/ 5 0)") == "/: division by zero (5 / 0)");
  CHECK(ERR_TYPE("(/ 5.0 0)") == "division-by-zero");
  CHECK(ERR_TYPE("(/ 5 0.0)") == "division-by-zero");
  CHECK(ERR_TYPE("(/ 0)") == "division-by-zero");
  CHECK(ERR_MSG("(mod 5 0)") == "mod: division by zero");
  CHECK(ERR_TYPE("(rem 5 0)") == "division-by-zero");
  CHECK(ERR_TYPE("(floor 5 0)") == "division-by-zero");
  CHECK(ERR_TYPE("(mod 5.0 0.0)") == "division-by-zero");
  CHECK(ERR_TYPE("(expt 0 -1)") == "division-by-zero");
  const char* overflow = "integer-overflow";
  CHECK(ERR_MSG("(+ most-positive-fixnum 1)") ==
        "+: integer overflow (result does not fit in 64 bits)");
  CHECK(ERR_TYPE("(let ((a most-positive-fixnum)) (+ a 1))") == overflow);
  CHECK(ERR_TYPE("(- most-negative-fixnum 1)") == overflow);
  CHECK(ERR_TYPE("(- most-negative-fixnum)") == overflow);
  CHECK(ERR_TYPE("(* most-positive-fixnum 2)") == overflow);
  CHECK(ERR_TYPE("(* 4611686018427387904 2)") == overflow);
  CHECK(ERR_TYPE("(/ most-negative-fixnum -1)") == overflow);
  CHECK(ERR_TYPE("(abs most-negative-fixnum)") == overflow);
  CHECK(ERR_TYPE("(expt 2 63)") == overflow);
  CHECK(ERR_TYPE("(floor most-negative-fixnum -1)") == overflow);
  CHECK(ERR_TYPE("(ash 1 63)") == overflow);
  CHECK(ERR_TYPE("(floor 1e30)") == overflow);
  CHECK(ERR_MSG("(1+ most-positive-fixnum)") ==
        "1+: integer overflow (result does not fit in 64 bits)");
  CHECK(ERR_TYPE("(1- most-negative-fixnum)") == overflow);
  CHECK(EV("(ash -1 63)") == "-9223372036854775808");
  CHECK(ERR_TYPE("(ash 1 63)") == overflow);
  CHECK(EV("(+ 4611686018427387903 4611686018427387904)") == "9223372036854775807");
  CHECK(EV("(expt -2 63)") == "-9223372036854775808");
  CHECK(EV("(* -1 most-positive-fixnum)") == "-9223372036854775807");
  CHECK(EV("(mod most-negative-fixnum -1)") == "0");
  CHECK(EV("(handler-case (/ 1 0) (arithmetic-error () :arith))") == ":arith");
}

TEST_CASE("eval: unbound variables and undefined functions", "[eval][errors]") {
  tl::Interpreter lisp;
  tl::Error v = err(lisp, "(list 1\n   undefined-var)");
  CHECK(v.type() == "unbound-variable");
  CHECK(v.message() == "unbound variable undefined-var");
  CHECK(v.location().line == 2);
  CHECK(v.location().column == 4);
  CHECK(v.location().length == 13);
  tl::Error f = err(lisp, "  (no-such-fn 1 2)");
  CHECK(f.type() == "undefined-function");
  CHECK(f.message() == "undefined function no-such-fn");
  CHECK(f.location().line == 1);
  CHECK(f.location().column == 4);
  // A function defined later is found at call time.
  lisp.eval("(defun calls-later () (later-fn))");
  CHECK(ERR_TYPE("(calls-later)") == "undefined-function");
  lisp.eval("(defun later-fn () :now-defined)");
  CHECK(EV("(calls-later)") == ":now-defined");
}

TEST_CASE("eval: errors carry the location of the offending form and a backtrace",
          "[eval][errors]") {
  tl::Interpreter lisp;
  lisp.eval("(defun f (x)\n"
            "  (car x))\n"
            "(defun g (y)\n"
            "  (+ 1 (f y)))\n",
            "fg.lisp");
  tl::Error e = err(lisp, "(g 5)");
  CHECK(e.type() == "type-error");
  CHECK(e.location().file == "fg.lisp");
  CHECK(e.location().line == 2);
  CHECK(e.location().column == 3);
  CHECK(e.location().length == 7);
  CHECK(e.source_line() == "  (car x))");
  REQUIRE(e.backtrace().size() == 2);
  CHECK(e.backtrace()[0] == "in f called at fg.lisp:4:8");
  CHECK(e.backtrace()[1] == "in g called at <eval>:1:1");
  std::string what = e.what();
  CHECK_THAT(what, Catch::StartsWith("fg.lisp:2:3: eval error: car: argument 1 must be a list"));
  CHECK_THAT(what, Catch::Contains("in f called at fg.lisp:4:8"));
  // A tail call replaces its caller's frame.
  lisp.eval("(defun tail-g (y) (f y))");
  tl::Error t = err(lisp, "(tail-g 5)");
  REQUIRE(t.backtrace().size() == 1);
  CHECK(t.backtrace()[0] == "in f called at <eval>:1:19");
  // Long backtraces are cut.
  lisp.eval("(defun rec (n) (if (= n 0) (car n) (list (rec (- n 1)))))");
  tl::Error deep = err(lisp, "(rec 30)");
  REQUIRE(deep.backtrace().size() >= 2);
  CHECK(deep.backtrace().size() <= 13);
  CHECK_THAT(deep.backtrace().front(), Catch::StartsWith("in rec called at <eval>:1:42"));
  CHECK(deep.backtrace().back() == "in rec called at <eval>:1:1");
  // The interpreter keeps working after each error.
  CHECK(EV("(g '(1))") == "2");
}

// --- places and iteration ----------------------------------------------------------------

TEST_CASE("eval: setf on places, push, pop, incf, decf", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("(let ((l (list 1 2 3))) (setf (car l) 10) (setf (cdr (cdr l)) (list 30))"
           " (setf (nth 1 l) 20) l)") == "(10 20 30)");
  CHECK(EV("(let ((l (list 1 2 3))) (setf (first l) :a (second l) :b (third l) :c) l)") ==
        "(:a :b :c)");
  CHECK(EV("(let ((v (vector 1 2 3))) (setf (aref v 0) :a (aref v 2) :c) v)") == "#(:a 2 :c)");
  CHECK(EV("(let ((v (vector 1 2))) (setf (elt v 1) :x) v)") == "#(1 :x)");
  CHECK(EV("(let ((h (make-hash-table))) (setf (gethash \"k\" h) 1)"
           " (incf (gethash \"k\" h) 5) (gethash \"k\" h))") == "6");
  CHECK(EV("(let ((x 1)) (list (setf x 2) x))") == "(2 2)");
  CHECK(EV("(let ((x 1)) (setf x 2 x (+ x 1)) x)") == "3");
  CHECK(EV("(setf)") == "nil");
  CHECK(EV("(let ((s nil)) (push 1 s) (push 2 s) (list (pop s) s))") == "(2 (1))");
  CHECK(EV("(let ((l (list 1 2))) (push 0 (cdr l)) l)") == "(1 0 2)");
  CHECK(EV("(let ((l (list 1 2 3))) (list (pop l) (pop l) l))") == "(1 2 (3))");
  CHECK(EV("(let ((x 5)) (incf x) (incf x 10) (decf x 2) x)") == "14");
  CHECK(EV("(let ((x 0)) (list (incf x) (incf x) x))") == "(1 2 2)");
  CHECK(EV("(let ((v (vector 1 2))) (incf (aref v 1) 40) v)") == "#(1 42)");
  // The subforms of a place are evaluated once.
  CHECK(EV("(let ((i 0) (v (vector 1 2 3))) (incf (aref v (incf i))) (list i v))") ==
        "(1 #(1 3 3))");
  CHECK(EV("(let ((l (list 1))) (pushnew 1 l) (pushnew 2 l) l)") == "(2 1)");
  CHECK(EV("(progn (defvar *place* 1) (setf (symbol-value '*place*) 9) *place*)") == "9");
  lisp.eval("(defun my-cadr (l) (car (cdr l)))"
            "(defsetf my-cadr (l v) `(%setcar (cdr ,l) ,v))");
  CHECK(EV("(let ((l (list 1 2 3))) (setf (my-cadr l) :two) l)") == "(1 :two 3)");
  CHECK(ERR_TYPE("(setf (car 5) 1)") == "type-error");
  CHECK(ERR_TYPE("(setf (aref (vector 1) 5) 1)") == "index-error");
  tl::Error unknown = err(lisp, "(let ((y 1)) (setf (foo y) 1))");
  CHECK(unknown.type() == "program-error");
  CHECK_THAT(unknown.message(),
             Catch::StartsWith("setf: (foo y) is not a place I know how to set"));
  // The error is located at the user's form, not inside the prelude's setf.
  CHECK(unknown.location().file == "<eval>");
  CHECK(unknown.location().line == 1);
  CHECK(unknown.location().column == 14);
  CHECK(ERR_TYPE("(setf x)") == "program-error");
}

TEST_CASE("eval: loop clauses", "[eval][loop]") {
  tl::Interpreter lisp;
  CHECK(EV("(loop for x in '(1 2 3) collect (* x x))") == "(1 4 9)");
  CHECK(EV("(loop for i from 1 to 5 sum i)") == "15");
  CHECK(EV("(loop for i from 0 below 5 collect i)") == "(0 1 2 3 4)");
  CHECK(EV("(loop for i below 3 collect i)") == "(0 1 2)");
  CHECK(EV("(loop for i from 10 downto 7 collect i)") == "(10 9 8 7)");
  CHECK(EV("(loop for i from 10 above 7 collect i)") == "(10 9 8)");
  CHECK(EV("(loop for i from 0 below 10 by 3 collect i)") == "(0 3 6 9)");
  CHECK(EV("(loop for i from 1 to 10 when (evenp i) collect i)") == "(2 4 6 8 10)");
  CHECK(EV("(loop for i from 1 to 10 unless (evenp i) collect i)") == "(1 3 5 7 9)");
  CHECK(EV("(loop repeat 3 collect :a)") == "(:a :a :a)");
  CHECK(EV("(loop repeat 0 collect :a)") == "nil");
  CHECK(EV("(loop for x across (vector 1 2 3) sum x)") == "6");
  CHECK(EV("(loop for x across \"ab\" collect x)") == "(#\\a #\\b)");
  CHECK(EV("(loop for x in '(3 1 4 1 5) maximize x)") == "5");
  CHECK(EV("(loop for x in '(3 1 4 1 5) minimize x)") == "1");
  CHECK(EV("(loop for x in '(1 2 3) count (oddp x))") == "2");
  CHECK(EV("(let ((acc nil)) (loop for x in '(1 2) do (push x acc)) acc)") == "(2 1)");
  CHECK(EV("(loop for i from 1 to 3 finally (return :done))") == ":done");
  CHECK(EV("(loop for i from 1 to 3 collect i into xs finally (return (reverse xs)))") ==
        "(3 2 1)");
  CHECK(EV("(loop for x in '(1 2 3) sum x into s finally (return (* s 10)))") == "60");
  CHECK(EV("(loop with x = 5 repeat 2 collect x)") == "(5 5)");
  CHECK(EV("(loop for x in '(1 2 3) always (> x 0))") == "t");
  CHECK(EV("(loop for x in '(1 2 3) always (> x 1))") == "nil");
  CHECK(EV("(loop for x in '(1 2 3) never (> x 2))") == "nil");
  CHECK(EV("(loop for x in '(1 2 3) thereis (and (> x 1) x))") == "2");
  CHECK(EV("(loop for x on '(1 2 3) collect x)") == "((1 2 3) (2 3) (3))");
  CHECK(EV("(loop for x in '(1 2 3) append (list x x))") == "(1 1 2 2 3 3)");
  CHECK(EV("(loop for i from 1 to 3 for j from 10 collect (+ i j))") == "(11 13 15)");
  CHECK(EV("(loop for x = 1 then (* x 2) repeat 5 collect x)") == "(1 2 4 8 16)");
  CHECK(EV("(loop for x in '(1 2 3) until (= x 2) collect x)") == "(1)");
  CHECK(EV("(loop for x in '(1 2 3 4) while (< x 3) collect x)") == "(1 2)");
  CHECK(EV("(loop for x in '(1 2 3) when (= x 2) return (* x 100))") == "200");
  CHECK(EV("(loop for x in '(1 2 3 4) when (evenp x) collect x and sum x into s"
           " finally (return s))") == "6");
  CHECK(EV("(let ((i 0)) (loop (setq i (+ i 1)) (when (> i 5) (return i))))") == "6");
  CHECK(EV("(loop for x in nil collect x)") == "nil");
  CHECK(EV("(loop for x in nil sum x)") == "0");
  CHECK(ERR_TYPE("(loop for x in '(1) frobnicate x)") == "program-error");
  // Accumulating into named variables with every spelling of the keywords.
  CHECK(EV("(loop for x in '(1 2 3) summing x into s counting t into c"
           " finally (return (list s c)))") == "(6 3)");
  CHECK(EV("(loop for x in '(1 2 3) count (oddp x) into c finally (return c))") == "2");
  // `for y = EXPR` without `then` evaluates EXPR on every iteration, after earlier clauses.
  CHECK(EV("(loop for x in '(1 2 3) for y = (* x 10) collect y)") == "(10 20 30)");
  // Several collect clauses share the default accumulator.
  CHECK(EV("(loop for x in '(1 2) collect x collect (- x))") == "(1 -1 2 -2)");
  CHECK(EV("(loop for x in '(1 2 3 4) if (oddp x) collect x else collect (- x))") ==
        "(1 -2 3 -4)");
  CHECK(EV("(loop for (a b) in '((1 2) (3 4)) collect (+ a b))") == "(3 7)");
  CHECK(EV("(loop named outer for i from 1 to 3 do (when (= i 2) (return-from outer :two)))") ==
        ":two");
}

TEST_CASE("eval: dolist, dotimes, do with return", "[eval][loop]") {
  tl::Interpreter lisp;
  CHECK(EV("(let ((s 0)) (dolist (x '(1 2 3) s) (setq s (+ s x))))") == "6");
  CHECK(EV("(dolist (x '(1 2 3)) (when (= x 2) (return (* x 100))))") == "200");
  CHECK(EV("(dolist (x '(1 2 3)))") == "nil");
  CHECK(EV("(dolist (x '(1 2) x))") == "nil");  // the result form sees x bound to nil
  CHECK(EV("(let ((s nil)) (dotimes (i 4 s) (push i s)))") == "(3 2 1 0)");
  CHECK(EV("(dotimes (i 10) (when (= i 3) (return i)))") == "3");
  CHECK(EV("(dotimes (i 0 :none))") == ":none");
  CHECK(EV("(dotimes (i 3 i))") == "3");
  CHECK(EV("(do ((i 0 (+ i 1)) (acc nil (cons i acc))) ((= i 3) acc))") == "(2 1 0)");
  CHECK(EV("(do ((i 0 (+ i 1))) ((= i 10) :never) (when (= i 4) (return i)))") == "4");
  // Parallel stepping in do.
  CHECK(EV("(do ((a 1 b) (b 2 a) (n 0 (+ n 1))) ((= n 3) (list a b)))") == "(2 1)");
  CHECK(EV("(let ((a 1) (b 2)) (psetq a b b a) (list a b))") == "(2 1)");
  lisp.eval("(defun find-big (l) (dolist (x l :none) (when (> x 10) (return-from find-big x))))");
  CHECK(EV("(list (find-big '(1 20 30)) (find-big '(1)))") == "(20 :none)");
}

TEST_CASE("eval: case, ecase, typecase, cond, when, unless, prog1, prog2", "[eval]") {
  tl::Interpreter lisp;
  CHECK(EV("(case 3 (1 :one) ((2 3) :two-or-three) (t :other))") == ":two-or-three");
  CHECK(EV("(case :z (1 :one) (otherwise :other))") == ":other");
  CHECK(EV("(case 9 (1 :one))") == "nil");
  CHECK(EV("(case 'b (a 1) (b 2))") == "2");
  CHECK(EV("(let ((n 0)) (case (setq n (+ n 1)) (1 :a) (2 :b)) n)") == "1");  // key evaluated once
  CHECK(ERR_MSG("(ecase 5 (1 :a) (2 :b))") == "ecase: 5 matches none of (1 2)");
  CHECK(EV("(ecase 2 (1 :a) (2 :b))") == ":b");
  CHECK(EV("(typecase 5 (string :s) (integer :i))") == ":i");
  CHECK(EV("(typecase \"x\" (number :n) (string :s))") == ":s");
  CHECK(EV("(typecase 'q (number :n) (t :other))") == ":other");
  CHECK(EV("(cond ((= 1 2) :a) ((= 1 1) :b) (t :c))") == ":b");
  CHECK(EV("(cond (nil 1) (5))") == "5");
  CHECK(EV("(cond)") == "nil");
  CHECK(EV("(cond (nil 1))") == "nil");
  CHECK(EV("(cond ((+ 1 1) :x :y))") == ":y");
  CHECK(ERR_TYPE("(cond 5)") == "program-error");
  CHECK(EV("(when t 1 2)") == "2");
  CHECK(EV("(when nil 1)") == "nil");
  CHECK(EV("(unless nil 1 2)") == "2");
  CHECK(EV("(unless t 1)") == "nil");
  CHECK(EV("(prog1 1 2 3)") == "1");
  CHECK(EV("(prog2 1 2 3)") == "2");
  CHECK(EV("(destructuring-bind (a (b c) &rest d) (list 1 (list 2 3) 4 5) (list a b c d))") ==
        "(1 2 3 (4 5))");
  CHECK(EV("(destructuring-bind (a . b) '(1 2 3) (list a b))") == "(1 (2 3))");
}

// --- builtins -------------------------------------------------------------------------------

TEST_CASE("eval: arithmetic builtins", "[eval][builtins]") {
  tl::Interpreter lisp;
  CHECK(EV("(list (+) (+ 1 2 3) (+ 1 2.5) (- 5) (- 10 1 2) (*) (* 2 3 4))") ==
        "(0 6 3.5 -5 7 1 24)");
  CHECK(EV("(list (/ 10 2) (/ 10 4) (/ 2) (/ 8 2 2) (/ 1.0 4))") == "(5 2.5 0.5 2 0.25)");
  CHECK(EV("(list (mod 7 3) (mod -7 3) (mod 7 -3) (mod -7 -3) (mod 7.5 2))") ==
        "(1 2 -2 -1 1.5)");
  CHECK(EV("(list (rem 7 3) (rem -7 3) (rem 7 -3))") == "(1 -1 1)");
  CHECK(EV("(list (floor 7 2) (floor -7 2) (ceiling 7 2) (ceiling -7 2) (truncate -7 2))") ==
        "(3 -4 4 -3 -3)");
  CHECK(EV("(list (round 7 2) (round 5 2) (round -5 2) (round 2.5) (round 3.5) (round -2.5))") ==
        "(4 2 -2 2 4 -2)");
  CHECK(EV("(list (floor 2.5) (ceiling 2.1) (truncate -2.7) (floor 5) (floor -0.5))") ==
        "(2 3 -2 5 -1)");
  CHECK(EV("(list (floor 7.0 2) (integerp (floor 2.5)))") == "(3 t)");
  CHECK(EV("(list (expt 2 10) (expt 2.0 3) (expt 2 -1) (expt 0 0) (expt 3 0) (expt 1.5 2))") ==
        "(1024 8.0 0.5 1 1 2.25)");
  CHECK(EV("(list (sqrt 16) (sqrt 2) (sqrt 0))") == "(4.0 1.4142135623730951 0.0)");
  CHECK(EV("(list (exp 0) (log 1) (log 8 2) (log 100 10) (sin 0) (cos 0))") ==
        "(1.0 0.0 3.0 2.0 0.0 1.0)");
  CHECK(lisp.eval("(exp 1)").as_double() == Approx(2.718281828459045));
  CHECK(lisp.eval("(sin (/ pi 2))").as_double() == Approx(1.0));
  CHECK(lisp.eval("(cos pi)").as_double() == Approx(-1.0));
  CHECK(lisp.eval("(atan 1 1)").as_double() == Approx(0.7853981633974483));
  CHECK(EV("(list (abs -5) (abs 5) (abs -2.5) (abs 0))") == "(5 5 2.5 0)");
  CHECK(EV("(list (min 3 1 2) (max 3 1 2) (max 1 2.0) (min 1.0 1) (min 7) (max -1 -5))") ==
        "(1 3 2.0 1.0 7 -1)");
  CHECK(EV("(list (1+ 5) (1- 5) (1+ 1.5) (float 3) (isqrt 17) (isqrt 16))") ==
        "(6 4 2.5 3.0 4 4)");
  CHECK(EV("(list (ash 1 10) (ash -8 -1) (ash 5 -100) (ash -5 -100))") == "(1024 -4 0 -1)");
  CHECK(EV("(list (logand 12 10) (logior 12 10) (logxor 12 10) (logand))") == "(8 14 6 -1)");
  CHECK(EV("(list (zerop 0) (zerop 0.0) (plusp 1) (minusp -1) (evenp 4) (oddp -3))") ==
        "(t t t t t t)");
  CHECK(EV("(list (signum -5) (signum 0) (signum 2.5))") == "(-1 0 1.0)");
  CHECK(EV("(list most-positive-fixnum most-negative-fixnum)") ==
        "(9223372036854775807 -9223372036854775808)");
  CHECK(EV("pi") == "3.141592653589793");
  CHECK(ERR_TYPE("(setq pi 3)") == "program-error");
  CHECK(ERR_MSG("(sqrt -1)") == "sqrt: negative argument -1");
  CHECK(ERR_TYPE("(log 0)") == "arithmetic-error");
  CHECK(ERR_TYPE("(log -1)") == "arithmetic-error");
  CHECK(ERR_TYPE("(log 8 1)") == "arithmetic-error");
  CHECK(ERR_TYPE("(isqrt -1)") == "arithmetic-error");
  // random is seeded per interpreter and reproducible.
  CHECK(EV("(progn (random-seed 7)"
           "  (let ((a (random 1000))) (random-seed 7) (= a (random 1000))))") ==
        "t");
  CHECK(EV("(let ((ok t)) (dotimes (i 200) (let ((r (random 5))) (unless (and (>= r 0) (< r 5))"
           " (setq ok nil)))) ok)") == "t");
  CHECK(EV("(floatp (random 1.0))") == "t");
  CHECK(ERR_TYPE("(random 0)") == "type-error");
}

TEST_CASE("eval: numeric comparisons", "[eval][builtins]") {
  tl::Interpreter lisp;
  CHECK(EV("(list (= 1 1) (= 1 1.0) (= 1 2) (= 1 1 1) (= 1 1 2) (= 5))") == "(t t nil t nil t)");
  CHECK(EV("(list (< 1 2 3) (< 1 3 2) (< 1 1) (< 1.5 2))") == "(t nil nil t)");
  CHECK(EV("(list (> 3 2 1) (> 3 3) (<= 1 1 2) (<= 2 1) (>= 2 2 1) (>= 1 2))") ==
        "(t nil t nil t nil)");
  CHECK(EV("(list (/= 1 2 3) (/= 1 2 1) (/= 1 1.0))") == "(t nil nil)");
  CHECK(EV("(let ((nan (- (exp 1000) (exp 1000)))) (list (= nan nan) (< nan 1) (> nan 1)))") ==
        "(nil nil nil)");
  CHECK(EV("(< most-negative-fixnum 0 most-positive-fixnum)") == "t");
  CHECK(ERR_TYPE("(< 1 \"a\")") == "type-error");
  CHECK(ERR_TYPE("(= 'a 'a)") == "type-error");
}

TEST_CASE("eval: list builtins", "[eval][builtins]") {
  tl::Interpreter lisp;
  CHECK(EV("(list (car '(1 2)) (cdr '(1 2)) (car nil) (cdr nil))") == "(1 (2) nil nil)");
  CHECK(EV("(list (cons 1 2) (cons 1 nil) (list) (list 1 2))") == "((1 . 2) (1) nil (1 2))");
  CHECK(EV("(list (append '(1) '(2 3) nil '(4)) (append) (append '(1) 2) (append nil nil))") ==
        "((1 2 3 4) nil (1 . 2) nil)");
  CHECK(EV("(let* ((tail (list 3)) (r (append (list 1 2) tail))) (eq (cddr r) tail))") == "t");
  CHECK(EV("(list (reverse '(1 2 3)) (reverse nil) (length '(1 2 3)) (length nil))") ==
        "((3 2 1) nil 3 0)");
  CHECK(EV("(list (nth 0 '(a b c)) (nth 2 '(a b c)) (nth 5 '(a b)) (nthcdr 2 '(1 2 3)))") ==
        "(a c nil (3))");
  CHECK(EV("(list (mapcar #'1+ '(1 2 3)) (mapcar #'+ '(1 2 3) '(10 20)) (mapcar #'car nil))") ==
        "((2 3 4) (11 22) nil)");
  CHECK(EV("(mapcar (lambda (x) (* x x)) '(1 2 3))") == "(1 4 9)");
  CHECK(EV("(let ((acc nil)) (list (mapc (lambda (x) (push x acc)) '(1 2)) acc))") ==
        "((1 2) (2 1))");
  CHECK(EV("(list (remove-if #'evenp '(1 2 3 4)) (remove-if-not #'evenp '(1 2 3 4)))") ==
        "((1 3) (2 4))");
  CHECK(EV("(remove 2 '(1 2 3 2))") == "(1 3)");
  CHECK(EV("(list (reduce #'+ '(1 2 3 4)) (reduce #'+ nil) (reduce #'+ '(5)))") == "(10 0 5)");
  CHECK(EV("(list (reduce #'+ '(1 2) :initial-value 10) (reduce #'+ nil :initial-value 7))") ==
        "(13 7)");
  CHECK(EV("(list (reduce #'- '(1 2 3) :from-end t) (reduce #'list '(1 2 3)))") ==
        "(2 ((1 2) 3))");
  CHECK(EV("(reduce #'max (vector 3 9 2))") == "9");
  CHECK(EV("(list (assoc 'b '((a . 1) (b . 2))) (assoc \"k\" '((\"k\" . 1)) :test #'equal)"
           " (assoc 'z '((a . 1))))") ==
        "((b . 2) (\"k\" . 1) nil)");
  CHECK(EV("(assoc 2 '((1 . a) (3 . b)) :test (lambda (k x) (< k x)))") == "(3 . b)");
  CHECK(EV("(list (member 2 '(1 2 3)) (member 5 '(1 2)) (member '(1) '((1) (2)) :test #'equal))") ==
        "((2 3) nil ((1) (2)))");
  CHECK(EV("(list (sort '(3 1 2) #'<) (sort (list \"b\" \"a\" \"c\") #'string<))") ==
        "((1 2 3) (\"a\" \"b\" \"c\"))");
  CHECK(EV("(sort '((b . 2) (a . 1) (c . 0)) #'< :key #'cdr)") == "((c . 0) (a . 1) (b . 2))");
  CHECK(EV("(sort (vector 3 1 2) #'>)") == "#(3 2 1)");
  CHECK(EV("(sort '((1 . a) (0 . b) (1 . c) (0 . d)) #'< :key #'car)") ==
        "((0 . b) (0 . d) (1 . a) (1 . c))");  // stable
  CHECK(EV("(let ((l (list 3 1 2))) (sort l #'<) l)") == "(3 1 2)");  // sort returns a copy
  CHECK(EV("(list (last '(1 2 3)) (last '(1 2 3) 2) (last nil) (last '(1 2) 5))") ==
        "((3) (2 3) nil (1 2))");
  CHECK(EV("(list (butlast '(1 2 3)) (butlast '(1 2 3) 2) (butlast '(1)) (butlast nil))") ==
        "((1 2) (1) nil nil)");
  CHECK(EV("(list (cadr '(1 2 3)) (cddr '(1 2 3)) (caar '((1) 2)) (cdar '((1 2))))") ==
        "(2 (3) 1 (2))");
  CHECK(EV("(list (first '(1 2 3 4)) (second '(1 2 3 4)) (third '(1 2 3 4)) (fourth '(1 2 3 4))"
           " (rest '(1 2)) (caddr '(1 2 3)))") == "(1 2 3 4 (2) 3)");
  CHECK(EV("(list (list* 1 2 '(3)) (list* 1 2) (copy-list '(1 2 . 3)))") ==
        "((1 2 3) (1 . 2) (1 2 . 3))");
  CHECK(EV("(let* ((a (list 1 2)) (b (copy-list a))) (list (equal a b) (eq a b)))") == "(t nil)");
  CHECK(EV("(list (subseq '(1 2 3 4) 1 3) (subseq '(1 2 3) 1) (subseq (vector 1 2 3) 1 2))") ==
        "((2 3) (2 3) #(2))");
  CHECK(EV("(list (position 3 '(1 2 3)) (position 9 '(1)) (position 2 (vector 1 2)))") ==
        "(2 nil 1)");
  CHECK(EV("(list (find-if #'evenp '(1 3 4 5)) (find-if #'evenp '(1)))") == "(4 nil)");
  CHECK(EV("(list (range 5) (range 1 10 3) (range 5 0 -2) (range 0))") ==
        "((0 1 2 3 4) (1 4 7) (5 3 1) nil)");
  CHECK(ERR_TYPE("(reverse '(1 . 2))") == "type-error");
  CHECK(ERR_TYPE("(append '(1 . 2) '(3))") == "type-error");
  CHECK(ERR_MSG("(mapcar #'car 5)") == "mapcar: argument 2 must be a list, got 5 (integer)");
  CHECK(ERR_TYPE("(sort '(1 2) 5)") == "type-error");
  CHECK(ERR_MSG("(nth -1 '(1))") == "nth: index must be non-negative, got -1");
  CHECK(ERR_TYPE("(subseq '(1 2) 1 5)") == "index-error");
  CHECK(ERR_TYPE("(range 1 5 0)") == "type-error");
}

TEST_CASE("eval: list utilities from the prelude", "[eval][builtins]") {
  tl::Interpreter lisp;
  CHECK(EV("(list (every #'evenp '(2 4)) (every #'evenp '(2 3)) (every #'evenp nil))") ==
        "(t nil t)");
  CHECK(EV("(list (some #'evenp '(1 3 4)) (some (lambda (x) (and (> x 1) (* x 10))) '(1 2 3))"
           " (some #'evenp nil))") == "(t 20 nil)");
  CHECK(EV("(list (find 3 '(1 2 3)) (find \"b\" '(\"a\" \"b\") :test #'equal) (find 2 '((1) (2)) :key #'car))") ==
        "(3 \"b\" (2))");
  CHECK(EV("(list (count 1 '(1 2 1)) (count-if #'oddp '(1 2 3)) (position-if #'evenp '(1 2)))") ==
        "(2 2 1)");
  CHECK(EV("(list (remove-duplicates '(1 2 1 3 2)) (union '(1 2) '(2 3))"
           " (intersection '(1 2 3) '(2 3 4)) (set-difference '(1 2 3) '(2)))") ==
        "((1 3 2) (1 2 3) (2 3) (1 3))");  // remove-duplicates keeps the last (issue 25)
  CHECK(EV("(flatten '(1 (2 (3 nil 4)) 5))") == "(1 2 3 4 5)");
  CHECK(EV("(list (acons 'a 1 nil) (getf '(:a 1 :b 2) :b) (getf '(:a 1) :z 9) (getf nil :a))") ==
        "(((a . 1)) 2 9 nil)");
  CHECK(EV("(list (mapcan (lambda (x) (list x x)) '(1 2)) (iota 3) (iota 3 1 2))") ==
        "((1 1 2 2) (0 1 2) (1 3 5))");
  CHECK(EV("(list (funcall (constantly 5) 1 2) (funcall (complement #'evenp) 3)"
           " (funcall (compose #'1+ #'1+) 1) (funcall (compose) 4))") == "(5 t 3 4)");
  CHECK(EV("(nconc (list 1) (list 2) nil (list 3))") == "(1 2 3)");
}

TEST_CASE("eval: vectors and sequences", "[eval][builtins]") {
  tl::Interpreter lisp;
  CHECK(EV("(list (vector) (vector 1 2) (make-vector 3 0) (make-vector 2))") ==
        "(#() #(1 2) #(0 0 0) #(nil nil))");
  CHECK(EV("(let ((v (vector))) (list (vector-push 1 v) (vector-push 2 v) (vector-pop v) v))") ==
        "(0 1 2 #(1))");
  CHECK(EV("(list (aref (vector 1 2) 1) (elt '(1 2 3) 2) (elt \"abc\" 1) (aref \"abc\" 2))") ==
        "(2 3 #\\b #\\c)");
  CHECK(EV("(list (length \"abc\") (length (vector 1 2)) (length (make-hash-table)))") ==
        "(3 2 0)");
  CHECK(EV("(list (reverse \"abc\") (reverse (vector 1 2)))") == "(\"cba\" #(2 1))");
  CHECK(EV("(list (coerce '(1 2) 'vector) (coerce (vector 1 2) 'list) (coerce \"ab\" 'list)"
           " (coerce '(\"a\" \"b\") 'string))") == "(#(1 2) (1 2) (#\\a #\\b) \"ab\")");
  CHECK(EV("(list (subseq \"hello\" 1) (subseq \"hello\" 1 3) (subseq \"hello\" 5))") ==
        "(\"ello\" \"el\" \"\")");
  CHECK(ERR_MSG("(aref (vector 1 2) 5)") == "aref: index 5 out of range for a vector of length 2");
  CHECK(ERR_MSG("(elt '(1 2) 5)") == "elt: index 5 out of range for a list of length 2");
  CHECK(ERR_TYPE("(elt \"ab\" -1)") == "index-error");
  CHECK(ERR_TYPE("(vector-pop (vector))") == "index-error");
  CHECK(ERR_TYPE("(aref '(1) 0)") == "type-error");
  CHECK(ERR_TYPE("(coerce '(1) 'hash)") == "type-error");
  CHECK(ERR_TYPE("(make-vector -1)") == "type-error");
  CHECK(EV("(handler-case (make-vector most-positive-fixnum) (error () :refused))") == ":refused");
  CHECK(ERR_TYPE("(make-vector 10000000000000)") == "storage-error");
  CHECK(EV("(length (make-vector 3))") == "3");
}

TEST_CASE("eval: string builtins", "[eval][builtins]") {
  tl::Interpreter lisp;
  CHECK(EV("(concat \"a\" \"b\" 1 :k 'sym 1.5 nil)") == "\"ab1:ksym1.5nil\"");
  CHECK(EV("(concat)") == "\"\"");
  CHECK(EV("(list (string-split \"a b  c\") (string-split \"  lead trail \"))") ==
        "((\"a\" \"b\" \"c\") (\"lead\" \"trail\"))");
  CHECK(EV("(list (string-split \"a,b,,c\" \",\") (string-split \"\" \",\")"
           " (string-split \"a--b\" \"--\"))") ==
        "((\"a\" \"b\" \"\" \"c\") (\"\") (\"a\" \"b\"))");
  CHECK(ERR_TYPE("(string-split \"a\" \"\")") == "type-error");
  CHECK(EV("(string-join (list \"a\" \"b\" 3) \", \")") == "\"a, b, 3\"");
  CHECK(EV("(string-join nil \", \")") == "\"\"");
  CHECK(EV("(list (parse-number \"42\") (parse-number \"-1.5e3\") (parse-number \" 7 \")"
           " (parse-number \".5\") (parse-number \"-9223372036854775808\"))") ==
        "(42 -1500.0 7 0.5 -9223372036854775808)");
  CHECK(ERR_MSG("(parse-number \"abc\")") == "parse-number: \"abc\" is not a number");
  CHECK(ERR_TYPE("(parse-number \"12abc\")") == "type-error");
  CHECK(ERR_TYPE("(parse-number \"\")") == "type-error");
  CHECK(ERR_TYPE("(parse-number \"99999999999999999999\")") == "integer-overflow");
  CHECK(EV("(list (string-upcase \"abC1\") (string-downcase \"ABc\")"
           " (string-trim \"  x y \n\"))") ==
        "(\"ABC1\" \"abc\" \"x y\")");
  CHECK(EV("(list (string-contains \"hello\" \"ll\") (string-contains \"hello\" \"z\")"
           " (string-prefix-p \"he\" \"hello\") (string-prefix-p \"lo\" \"hello\")"
           " (string-suffix-p \"lo\" \"hello\") (string-suffix-p \"hello!\" \"hello\"))") ==
        "(2 nil t nil t nil)");
  CHECK(EV("(list (string-replace \"a-b-c\" \"-\" \"+\") (string-replace \"aaa\" \"aa\" \"b\"))") ==
        "(\"a+b+c\" \"ba\")");
  CHECK(EV("(list (string= \"a\" \"a\") (string= \"a\" \"A\") (string= 'abc \"abc\")"
           " (string< \"a\" \"b\") (string> \"a\" \"b\"))") == "(t nil t 0 nil)");
  CHECK(EV("(list (char-code \"A\") (code-char 66) (string 42) (string 'sym) (string \"s\"))") ==
        "(65 #\\B \"42\" \"sym\" \"s\")");
  CHECK(EV("(list (prin1-to-string \"q\") (number-to-string 1.5) (symbol-name 'foo)"
           " (symbol-name nil))") == "(\"\\\"q\\\"\" \"1.5\" \"foo\" \"nil\")");
  CHECK(EV("(list (intern \"bar\") (eq (intern \"bar\") 'bar) (intern \":kw\") (intern \"nil\")"
           " (make-keyword \"kw\") (make-keyword 'sym))") == "(bar t :kw nil :kw :sym)");
  CHECK(ERR_TYPE("(char-code \"\")") == "type-error");
  CHECK(ERR_TYPE("(code-char -1)") == "type-error");
  CHECK(ERR_TYPE("(number-to-string \"1\")") == "type-error");
}

TEST_CASE("eval: format directives", "[eval][builtins]") {
  tl::Interpreter lisp;
  auto fmt = [&](const std::string& args) {
    return lisp.eval("(format nil " + args + ")").as_string();
  };
  CHECK(fmt(R"("~a|~s" "str" "str")") == "str|\"str\"");
  CHECK(fmt(R"("~a ~s" 'sym :kw)") == "sym :kw");
  CHECK(fmt(R"("~a" (list 1 "x"))") == "(1 x)");
  CHECK(fmt(R"("~s" (list 1 "x"))") == "(1 \"x\")");
  CHECK(fmt(R"("~d" 42)") == "42");
  CHECK(fmt(R"("~5d|" 42)") == "   42|");
  CHECK(fmt(R"("~@d ~@d" 5 -5)") == "+5 -5");
  CHECK(fmt(R"("~f" 1.5)") == "1.5");
  CHECK(fmt(R"("~f" 2)") == "2.0");
  CHECK(fmt(R"("~,2f" 3.14159)") == "3.14");
  CHECK(fmt(R"("~,2f" 2)") == "2.00");
  CHECK(fmt(R"("~,0f" 2.7)") == "3");
  CHECK(fmt(R"("~8,3f|" 3.14159)") == "   3.142|");
  CHECK(fmt(R"("~,100f" 1e300)").size() == 402);
  CHECK(ERR_TYPE(R"((format nil "~4294967299a|" "x"))") == "program-error");
  CHECK(fmt(R"("~1000,2f" 1.0)").size() == 1000);
  CHECK(fmt(R"("~,3e" 12345.678)") == "1.235e+4");
  CHECK(fmt(R"("a~%b")") == "a\nb");
  CHECK(fmt(R"("~3%")") == "\n\n\n");
  CHECK(fmt(R"("~&x~&~&y")") == "x\ny");
  CHECK(fmt(R"("~~")") == "~");
  CHECK(fmt(R"("100~~ ~a" 1)") == "100~ 1");
  CHECK(fmt(R"("~10a|" "ab")") == "ab        |");
  CHECK(fmt(R"("~10@a|" "ab")") == "        ab|");
  CHECK(fmt(R"("~x ~o ~b ~x" 255 8 5 -255)") == "FF 10 101 -FF");
  CHECK(fmt(R"("~A ~D" 1 2)") == "1 2");  // directives are case-insensitive
  CHECK(fmt(R"("no directives")") == "no directives");
  CHECK(fmt(R"("a~
                 b")") == "ab");  // ~ newline skips the line break and indentation
  CHECK(lisp.eval(R"((format "~a-~a" 1 2))").as_string() == "1-2");
  CHECK(ERR_MSG(R"((format nil "~a"))") ==
        "format: not enough arguments for directive ~a in \"~a\"");
  CHECK(ERR_MSG(R"((format nil "~q" 1))") == "format: unknown directive ~q in \"~q\"");
  CHECK(ERR_MSG(R"((format nil "~"))") == "format: the control string ends inside a directive in \"~\"");
  CHECK(ERR_TYPE("(format nil 5)") == "type-error");
  std::string out;
  lisp.set_output([&](std::string_view s) { out += s; });
  CHECK(lisp.eval(R"((format t "x=~a~%" 5))").is_nil());
  CHECK(out == "x=5\n");
}

TEST_CASE("eval: hash tables", "[eval][builtins]") {
  tl::Interpreter lisp;
  lisp.eval("(defvar *h* (make-hash-table))");
  lisp.eval("(setf (gethash \"a\" *h*) 1 (gethash (list 1 2) *h*) 2 (gethash 3 *h*) 3)");
  CHECK(EV("(list (gethash \"a\" *h*) (gethash (list 1 2) *h*) (gethash 3 *h*))") == "(1 2 3)");
  CHECK(EV("(list (gethash \"zz\" *h*) (gethash \"zz\" *h* :dflt))") == "(nil :dflt)");
  CHECK(EV("(list (hash-table-count *h*) (length *h*) (hash-table-p *h*))") == "(3 3 t)");
  CHECK(EV("(list (hash-table-keys *h*) (hash-table-values *h*))") ==
        "((\"a\" (1 2) 3) (1 2 3))");
  CHECK(EV("(list (remhash \"a\" *h*) (remhash \"a\" *h*) (hash-table-count *h*))") ==
        "(t nil 2)");
  CHECK(EV("(list (hash-table-contains-p 3 *h*) (hash-table-contains-p \"a\" *h*))") == "(t nil)");
  CHECK(EV("(progn (setf (gethash 3 *h*) :replaced)"
           "  (list (gethash 3 *h*) (hash-table-count *h*)))") ==
        "(:replaced 2)");
  CHECK(EV("(let ((acc nil)) (maphash (lambda (k v) (push (list k v) acc)) *h*) (reverse acc))") ==
        "(((1 2) 2) (3 :replaced))");
  // A stored nil value is distinct from a missing key only through contains-p.
  CHECK(EV("(let ((h (make-hash-table))) (setf (gethash :k h) nil)"
           " (list (gethash :k h :missing) (hash-table-contains-p :k h)))") == "(nil t)");
  // :test eq compares strings by identity; eql distinguishes 1 and 1.0.
  CHECK(EV("(let ((h (make-hash-table :test 'eq)) (k \"a\")) (setf (gethash k h) 1)"
           " (list (gethash \"a\" h) (gethash k h)))") == "(nil 1)");
  CHECK(EV("(let ((h (make-hash-table :test 'eql))) (setf (gethash 1 h) :i (gethash 1.0 h) :f)"
           " (list (gethash 1 h) (gethash 1.0 h) (hash-table-count h)))") == "(:i :f 2)");
  CHECK(EV("(let ((h (make-hash-table :test #'equal))) (setf (gethash (vector 1 \"x\") h) :v)"
           " (gethash (vector 1 \"x\") h))") == ":v");
  CHECK(ERR_MSG("(make-hash-table :test 'foo)") ==
        "make-hash-table: :test must be eq, eql or equal, got foo");
  // Growing, removing most entries, and clearing.
  CHECK(EV("(let ((h (make-hash-table)))"
           "  (dotimes (i 1000) (setf (gethash i h) (* i i)))"
           "  (dotimes (i 990) (remhash i h))"
           "  (list (hash-table-count h) (gethash 995 h) (gethash 5 h)"
           "        (length (hash-table-keys h))))") == "(10 990025 nil 10)");
  CHECK(EV("(let ((h (make-hash-table))) (dotimes (i 100) (setf (gethash (format nil \"k~a\" i) h)"
           " i)) (dotimes (i 100) (remhash (format nil \"k~a\" i) h))"
           " (setf (gethash \"new\" h) 1) (list (hash-table-count h) (gethash \"k50\" h)"
           " (gethash \"new\" h)))") == "(1 nil 1)");
  CHECK(EV("(let ((h (make-hash-table))) (setf (gethash 1 h) 1) (clrhash h)"
           " (setf (gethash 2 h) 2) (list (hash-table-count h) (gethash 1 h) (gethash 2 h)))") ==
        "(1 nil 2)");
  // maphash works on a snapshot, so the function may modify the table.
  CHECK(EV("(let ((h (make-hash-table))) (setf (gethash 1 h) 1 (gethash 2 h) 2)"
           " (maphash (lambda (k v) (remhash k h) (setf (gethash (* 10 k) h) v)) h)"
           " (sort (hash-table-keys h) #'<))") == "(10 20)");
}

TEST_CASE("eval: apply, funcall, eval and gensym", "[eval][builtins]") {
  tl::Interpreter lisp;
  CHECK(EV("(list (apply #'+ 1 2 '(3 4)) (apply #'list nil) (apply #'+ '(1 2)))") ==
        "(10 nil 3)");
  CHECK(EV("(list (funcall #'list 1 2) (funcall (lambda () :no-args)))") == "((1 2) :no-args)");
  CHECK(EV("(apply (lambda (&rest r) r) 1 '(2))") == "(1 2)");
  CHECK(EV("(list (eval '(+ 1 2)) (eval (list '* 3 4)) (eval 5) (eval ''q))") == "(3 12 5 q)");
  CHECK(EV("(let ((x 1)) (eval '(defvar *from-eval* 10)) *from-eval*)") == "10");
  CHECK(ERR_TYPE("(let ((x 1)) (eval 'x))") == "unbound-variable");  // eval is global
  CHECK(EV("(let ((g1 (gensym)) (g2 (gensym))) (list (symbolp g1) (eq g1 g2)"
           " (eq g1 (intern (symbol-name g1)))))") == "(t nil nil)");
  CHECK(EV("(string-prefix-p \"pre\" (symbol-name (gensym \"pre\")))") == "t");
  CHECK(EV("(funcall (let ((n 5)) (lambda (x) (+ x n))) 1)") == "6");
  CHECK(EV("(identity 5)") == "5");
}

TEST_CASE("eval: equality predicates", "[eval][builtins]") {
  tl::Interpreter lisp;
  CHECK(EV("(list (eq 'a 'a) (eq 1 1) (eq 1.5 1.5) (eq \"a\" \"a\") (eq nil '())"
           " (eq (list 1) (list 1)) (eq :k :k))") == "(t t t nil t nil t)");
  CHECK(EV("(list (eql 1 1) (eql 1 1.0) (eql 2.5 2.5) (eql 'a 'a) (eql \"a\" \"a\"))") ==
        "(t nil t t nil)");
  CHECK(EV("(list (equal \"a\" \"a\") (equal '(1 (2)) '(1 (2))) (equal (vector 1) (vector 1))"
           " (equal 1 1.0) (equal '(1 2) '(1 2 3)) (equal \"a\" \"A\"))") ==
        "(t t t nil nil nil)");
  CHECK(EV("(let ((s \"x\")) (eq s s))") == "t");
  CHECK(EV("(list (eql 0.0 -0.0) (= 0.0 -0.0))") == "(nil t)");
}

TEST_CASE("eval: type predicates and type-of", "[eval][builtins]") {
  tl::Interpreter lisp;
  CHECK(EV("(list (integerp 1) (integerp 1.0) (floatp 1.0) (floatp 1) (numberp 1)"
           " (numberp \"1\"))") ==
        "(t nil t nil t nil)");
  CHECK(EV("(list (consp nil) (consp '(1)) (listp nil) (listp '(1)) (listp 1) (atom 1)"
           " (atom '(1)) (atom nil))") == "(nil t t t nil t nil t)");
  CHECK(EV("(list (symbolp 'a) (symbolp nil) (symbolp :k) (symbolp \"a\") (keywordp :k)"
           " (keywordp 'k))") == "(t t t nil t nil)");
  CHECK(EV("(list (stringp \"s\") (vectorp (vector)) (vectorp '(1))"
           " (hash-table-p (make-hash-table)))") ==
        "(t t nil t)");
  CHECK(EV("(list (functionp #'car) (functionp (lambda ())) (functionp 'car) (macrop 1)"
           " (conditionp 1) (null nil) (null 0) (not 1))") == "(t t nil nil nil t nil nil)");
  CHECK(EV("(mapcar #'type-of (list 1 1.0 \"s\" 's :k nil '(1) (vector) (make-hash-table)"
           " #'car (lambda ())))") ==
        "(integer float string symbol keyword null cons vector hash-table function function)");
}

TEST_CASE("eval: describe-string and documentation", "[eval][builtins]") {
  tl::Interpreter lisp;
  lisp.eval("(defun sq (x) \"Squares X.\" (* x x))", "doc.lisp");
  CHECK(lisp.eval("(describe-string 'sq)").as_string() ==
        "sq is a function.\n  usage: (sq x)\n  Squares X.\n  defined at doc.lisp:1");
  CHECK(EV("(documentation 'sq)") == "\"Squares X.\"");
  CHECK(EV("(documentation #'sq)") == "\"Squares X.\"");
  lisp.eval("(defun nodoc (a &optional b) a)");
  CHECK(lisp.eval("(describe-string 'nodoc)").as_string() ==
        "nodoc is a function.\n  usage: (nodoc a &optional b)\n  (no documentation)\n"
        "  defined at <eval>:1");
  CHECK(EV("(documentation 'nodoc)") == "nil");
  std::string car_doc = lisp.eval("(describe-string 'car)").as_string();
  CHECK_THAT(car_doc, Catch::StartsWith("car is a builtin function.\n  usage: (car LIST)\n"
                                        "  First element of LIST; nil for nil."));
  CHECK_THAT(car_doc, Catch::Contains("builtins_list.cpp"));
  // The docstring, examples included (the manual runs them).
  CHECK_THAT(EV("(documentation 'car)"), Catch::StartsWith("\"First element of LIST; nil for nil.\\n  (car "));
  lisp.eval("(defmacro mm (a) \"Doc of mm.\" a)");
  CHECK(lisp.eval("(describe-string 'mm)").as_string() ==
        "mm is a macro.\n  usage: (mm a)\n  Doc of mm.");
  CHECK(EV("(documentation 'mm)") == "\"Doc of mm.\"");
  CHECK_THAT(lisp.eval("(documentation 'when)").as_string(), Catch::StartsWith("(when TEST"));
  lisp.eval("(defvar *vv* 3 \"Doc vv.\")");
  CHECK_THAT(lisp.eval("(describe-string '*vv*)").as_string(), Catch::StartsWith("*vv* is "));
  CHECK_THAT(lisp.eval("(describe-string '*vv*)").as_string(), Catch::Contains("3"));
  CHECK_THAT(lisp.eval("(describe-string '*vv*)").as_string(), Catch::EndsWith("\n  Doc vv."));
  CHECK(lisp.eval("(describe-string 'no-such-thing)").as_string() ==
        "no-such-thing is a symbol with no global value.");
  CHECK(lisp.eval("(describe-string 5)").as_string() == "5 is an integer.");
  CHECK(EV("(documentation 'no-such-thing)") == "nil");
  std::string out;
  lisp.set_output([&](std::string_view s) { out += s; });
  CHECK(EV("(describe 'sq)") == "nil");
  CHECK_THAT(out, Catch::StartsWith("sq is a function.\n"));
}

TEST_CASE("eval: closures capture their environment", "[eval]") {
  tl::Interpreter lisp;
  lisp.eval("(defun make-counter () (let ((n 0)) (lambda () (setq n (+ n 1)))))");
  CHECK(EV("(let ((c1 (make-counter)) (c2 (make-counter))) (funcall c1) (funcall c1)"
           " (list (funcall c1) (funcall c2)))") == "(3 1)");
  CHECK(EV("(let ((fs nil)) (dolist (x '(1 2 3)) (push (lambda () x) fs))"
           " (mapcar #'funcall fs))") ==
        "(3 2 1)");
  CHECK(EV("(let ((x 1)) (let ((get (lambda () x)) (set (lambda (v) (setq x v))))"
           " (funcall set 5) (list x (funcall get))))") == "(5 5)");
  CHECK(EV("(funcall (funcall (lambda (a) (lambda (b) (lambda (c) (list a b c)))) 1) 2)") ==
        "#<function lambda>");
  CHECK(EV("(funcall (funcall (funcall (lambda (a) (lambda (b) (lambda (c) (list a b c)))) 1) 2)"
           " 3)") == "(1 2 3)");
}
