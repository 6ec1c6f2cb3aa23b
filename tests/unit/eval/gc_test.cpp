// SPDX-License-Identifier: Apache-2.0
// Unit tests for the garbage collector: reclamation, bounded heaps, roots held by the host.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "../sanitizer.h"
#include "eval/interp.h"
#include "tensorlisp/tensorlisp.hpp"

namespace {

std::int64_t gc_count(tl::Interpreter& lisp) { return lisp.eval("(gc)").as_int(); }

std::int64_t stat(tl::Interpreter& lisp, const std::string& key) {
  return lisp.eval("(getf (gc-stats) :" + key + ")").as_int();
}

// TENSORLISP_GC_STRESS=BYTES collects every few bytes; long loops then run 100 times shorter.
bool gc_stress() {
  const char* stress = std::getenv("TENSORLISP_GC_STRESS");
  return stress != nullptr && std::strtoull(stress, nullptr, 10) > 0;
}

std::int64_t scaled(std::int64_t iterations) { return gc_stress() ? iterations / 100 : iterations; }

std::string n(std::int64_t iterations) { return std::to_string(scaled(iterations)); }

// Under AddressSanitizer every allocation costs several times more: the long loops run a
// quarter as many iterations there (still dozens of collections).
constexpr std::int64_t kLoopDivisor = tl::test::kAddressSanitizer ? 4 : 1;

}  // namespace

TEST_CASE("gc: (gc) returns the live object count and (gc-stats) is a plist", "[gc]") {
  tl::Interpreter lisp;
  std::int64_t n = gc_count(lisp);
  CHECK(n > 100);  // at least the builtins and the prelude's functions
  // Right after a collection, the stats agree with what (gc) returned.
  CHECK(lisp.eval("(let ((n (gc))) (= n (getf (gc-stats) :objects)))").truthy());
  tl::Value stats = lisp.eval("(gc-stats)");
  auto items = stats.as_list();
  REQUIRE(items.size() == 10);
  CHECK(items[0].repr() == ":objects");
  CHECK(items[2].repr() == ":bytes");
  CHECK(items[4].repr() == ":collections");
  CHECK(items[6].repr() == ":allocated");
  CHECK(items[8].repr() == ":held");
  CHECK(items[9].is_int());
  for (int i = 1; i < 8; i += 2) {
    CHECK(items[i].is_int());
    CHECK(items[i].as_int() > 0);
  }
  // More bytes have been allocated in total than are live.
  CHECK(items[7].as_int() >= items[3].as_int());
}

TEST_CASE("gc: each (gc) counts one collection", "[gc]") {
  tl::Interpreter lisp;
  std::int64_t extra = lisp.eval("(let ((c (getf (gc-stats) :collections))) (gc) (gc) (gc)"
                                 " (- (getf (gc-stats) :collections) c))")
                           .as_int();
  if (gc_stress()) {
    CHECK(extra >= 3);
  } else {
    CHECK(extra == 3);
  }
}

TEST_CASE("gc: garbage made in a loop is reclaimed", "[gc]") {
  tl::Interpreter lisp;
  gc_count(lisp);
  std::int64_t allocated_before = stat(lisp, "allocated");
  // Within one form, so the code of the form itself is live at both measurements.
  tl::Value counts = lisp.eval(
      "(let ((before (gc)))"
      "  (dotimes (i " + n(100000) + ") (list i (vector i) (format nil \"~a\" i)))"
      "  (list before (gc)))");
  auto c = counts.as_list();
  REQUIRE(c.size() == 2);
  std::int64_t before = c[0].as_int(), after = c[1].as_int();
  CHECK(after >= before);
  CHECK(after - before < 50);
  // The loop really allocated: at least 400,000 objects of at least 16 bytes.
  CHECK(stat(lisp, "allocated") - allocated_before > scaled(400000) * 16);
}

TEST_CASE("gc: data reachable from globals survives, and is freed once dropped", "[gc]") {
  tl::Interpreter lisp;
  lisp.eval("(defvar *big* nil)");
  std::int64_t base = gc_count(lisp);
  lisp.eval("(setq *big* (range 50000))");
  std::int64_t with_big = gc_count(lisp);
  CHECK(with_big - base >= 50000);
  CHECK(lisp.eval("(length *big*)").as_int() == 50000);
  CHECK(lisp.eval("(nth 49999 *big*)").as_int() == 49999);
  lisp.eval("(setq *big* nil)");
  std::int64_t after = gc_count(lisp);
  CHECK(with_big - after >= 50000);
  CHECK(after - base < 50);
}

TEST_CASE("gc: mutually referencing closures become garbage once unreachable", "[gc]") {
  tl::Interpreter lisp;
  lisp.eval("(defvar *pairs* nil)");
  lisp.eval(
      "(defun make-pair ()"
      "  (let ((f nil) (g nil))"
      "    (setq f (lambda () g))"
      "    (setq g (lambda () f))"
      "    (list f g)))");
  std::int64_t base = gc_count(lisp);
  lisp.eval("(dotimes (i 1000) (push (make-pair) *pairs*))");
  std::int64_t held = gc_count(lisp);
  // Each pair: two closures, their shared environment and a two-element list; plus the cons
  // in *pairs*.
  CHECK(held - base >= 1000 * 5);
  // The cycle is intact and usable while reachable.
  CHECK(lisp.eval("(let ((p (car *pairs*))) (eq (funcall (funcall (car p))) (car p)))").truthy());
  lisp.eval("(setq *pairs* nil)");
  std::int64_t freed = gc_count(lisp);
  CHECK(held - freed >= 1000 * 5);
  CHECK(freed - base < 50);
}

TEST_CASE("gc: a cycle through a hash table and a vector is collected", "[gc]") {
  tl::Interpreter lisp;
  lisp.eval("(defvar *h* nil)");
  std::int64_t base = gc_count(lisp);
  lisp.eval(
      "(setq *h* (let ((h (make-hash-table)) (v (make-vector 100)))"
      "  (dotimes (i 100) (setf (aref v i) (list i h)))"
      "  (setf (gethash :v h) v)"
      "  h))");
  std::int64_t held = gc_count(lisp);
  CHECK(held - base >= 200);
  CHECK(lisp.eval("(car (aref (gethash :v *h*) 99))").as_int() == 99);
  lisp.eval("(setq *h* nil)");
  CHECK(held - gc_count(lisp) >= 200);
}

TEST_CASE("gc: a loop allocating 20 million conses keeps the heap bounded", "[gc]") {
  tl::Interpreter lisp;
  std::int64_t collections_before = stat(lisp, "collections");
  // Sample the heap size after every million conses (a quarter million under ASan).
  const std::int64_t per = 1000000 / kLoopDivisor;
  tl::Value peak = lisp.eval(
      "(let ((peak 0))"
      "  (dotimes (j 20)"
      "    (dotimes (i " +
      n(per) +
      ") (cons i i))"
      "    (setq peak (max peak (getf (gc-stats) :bytes))))"
      "  peak)");
  CHECK(peak.as_int() < 64ll * 1024 * 1024);
  CHECK(stat(lisp, "bytes") < 64ll * 1024 * 1024);
  std::int64_t collections = stat(lisp, "collections") - collections_before;
  CHECK(collections > 10);
  // 20 million conses (5 under ASan) of at least 32 bytes each went through the allocator.
  CHECK(stat(lisp, "allocated") > scaled(20 * per) * 32);
}

TEST_CASE("gc: automatic collections keep live data intact", "[gc]") {
  tl::Interpreter lisp;
  std::int64_t c0 = stat(lisp, "collections");
  // A live structure that garbage churns around; each step verifies the structure.
  tl::Value ok = lisp.eval(
      "(let ((keep (mapcar (lambda (i) (list i (format nil \"s~a\" i) (vector i))) (range 1000)))"
      "      (h (make-hash-table)))"
      "  (dotimes (i 1000) (setf (gethash (format nil \"k~a\" i) h) (list i)))"
      "  (dotimes (r 5)"
      "    (dotimes (i " + n(300000) + ") (list i i))"
      "  )"
      "  (and (= (length keep) 1000)"
      "       (equal (nth 999 keep) (list 999 \"s999\" (vector 999)))"
      "       (equal (gethash \"k500\" h) (list 500))"
      "       (= (hash-table-count h) 1000)))");
  CHECK(ok.truthy());
  CHECK(stat(lisp, "collections") > c0);
}

TEST_CASE("gc: collections at awkward moments keep temporaries alive", "[gc]") {
  tl::Interpreter lisp;
  // Inside a function whose frame lives on the frame stack.
  lisp.eval("(defun f (x) (let ((y (list x (vector x)))) (gc) (dotimes (i 1000) (cons i i)) y))");
  CHECK(lisp.eval("(f 5)").repr() == "(5 #(5))");
  // While optional and key defaults are computed.
  lisp.eval("(defun g (a &optional (b (progn (gc) (list a))) &rest r) (list a b r))");
  CHECK(lisp.eval("(g (list 1))").repr() == "((1) ((1)) nil)");
  lisp.eval("(defun k (a &key (b (progn (gc) (list a a))) (c (progn (gc) (vector b))))"
            "  (list a b c))");
  CHECK(lisp.eval("(k (list 9))").repr() == "((9) ((9) (9)) #(((9) (9))))");
  // In higher-order builtins' callbacks.
  CHECK(lisp.eval("(mapcar (lambda (x) (gc) (list x (* x x))) (list 1 2 3))").repr() ==
        "((1 1) (2 4) (3 9))");
  CHECK(lisp.eval("(reduce (lambda (a b) (gc) (append a (list b))) (list 1 2 3)"
                  " :initial-value nil)")
            .repr() == "(1 2 3)");
  CHECK(lisp.eval("(let ((v (vector (list 1) (list 3) (list 2))))"
                  "  (sort v (lambda (a b) (gc) (> (car a) (car b)))))")
            .repr() == "#((3) (2) (1))");
  CHECK(lisp.eval("(let ((h (make-hash-table))) (setf (gethash 1 h) (list 1))"
                  "  (maphash (lambda (k v) (gc) (setf (gethash (+ k 100) h) (list v))) h)"
                  "  (gethash 101 h))")
            .repr() == "((1))");
  // In a macro expander, a handler, a cleanup form, and under a dynamic binding.
  lisp.eval("(defmacro m () (gc) (list 'list 1 2))");
  CHECK(lisp.eval("(list (m) (m))").repr() == "((1 2) (1 2))");
  CHECK(lisp.eval("(handler-case (let ((x (list 1))) (error 'type-error x))"
                  "  (error (e) (gc) (condition-data e)))")
            .repr() == "((1))");
  CHECK(lisp.eval("(let ((r nil)) (unwind-protect (setq r (list 1 2)) (gc)) r)").repr() ==
        "(1 2)");
  lisp.eval("(defvar *sp* (list 1))");
  CHECK(lisp.eval("(let ((*sp* (list 2))) (gc) *sp*)").repr() == "(2)");
  CHECK(lisp.eval("*sp*").repr() == "(1)");
  // In eval.
  CHECK(lisp.eval("(eval (list 'progn (list 'gc) (list 'list 1 2)))").repr() == "(1 2)");
}

TEST_CASE("gc: values held by the host survive collections", "[gc]") {
  tl::Interpreter lisp;
  tl::Value held = lisp.eval("(list 1 \"two\" (vector 3 (list 4)) :five)");
  tl::Value fn = lisp.eval("(let ((n 10)) (lambda (x) (+ x n)))");
  tl::Value str = lisp.eval("(format nil \"made-~a\" 42)");
  // Nothing in Lisp refers to these any more; only the handles do.
  lisp.eval("(gc)");
  // Enough garbage for automatic collections.
  lisp.eval("(dotimes (i " + n(400000) + ") (list i i))");
  lisp.eval("(gc)");
  CHECK(held.repr() == "(1 \"two\" #(3 (4)) :five)");
  CHECK(str.as_string() == "made-42");
  CHECK(lisp.apply(fn, {tl::Value(5)}).as_int() == 15);
  // Items taken out of a held list are roots of their own.
  std::vector<tl::Value> items = held.as_list();
  held = tl::Value();
  lisp.eval("(gc)");
  REQUIRE(items.size() == 4);
  CHECK(items[1].as_string() == "two");
  CHECK(items[2].repr() == "#(3 (4))");
}

TEST_CASE("gc: dropping a host handle releases its value", "[gc]") {
  tl::Interpreter lisp;
  std::int64_t base = gc_count(lisp);
  auto big = std::make_unique<tl::Value>(lisp.eval("(range 20000)"));
  std::int64_t held = gc_count(lisp);
  CHECK(held - base >= 20000);
  tl::Value copy = *big;  // a copy shares the root
  big.reset();
  CHECK(gc_count(lisp) - base >= 20000);
  copy = tl::Value();
  CHECK(held - gc_count(lisp) >= 20000);
}

TEST_CASE("gc: a Value outliving its Interpreter reads as nil without crashing", "[gc]") {
  tl::Value list, str, fn;
  {
    tl::Interpreter lisp;
    list = lisp.eval("(list 1 2 3)");
    str = lisp.eval("\"text\"");
    fn = lisp.eval("#'car");
    CHECK(list.repr() == "(1 2 3)");
    CHECK(str.is_string());
  }
  CHECK(list.is_nil());
  CHECK(list.repr() == "nil");
  CHECK(list.type_name() == "null");
  CHECK(list.is_list());
  CHECK(list.as_list().empty());
  CHECK_FALSE(list.truthy());
  CHECK(str.is_nil());
  CHECK_FALSE(str.is_string());
  CHECK_THROWS_AS(str.as_string(), tl::Error);
  CHECK_FALSE(fn.is_function());
  // Copying and destroying such handles is fine too.
  tl::Value copy = list;
  copy = str;
  CHECK(copy.is_nil());
  // Passing one into a new interpreter gives nil.
  tl::Interpreter other;
  CHECK(other.call("list", {list}).repr() == "(nil)");
}

TEST_CASE("gc: an error held by the host keeps its condition after the interpreter is gone",
          "[gc]") {
  std::unique_ptr<tl::Error> kept;
  {
    tl::Interpreter lisp;
    try {
      lisp.eval("(error \"held ~a\" 1)");
    } catch (const tl::Error& e) {
      kept = std::make_unique<tl::Error>(e);
    }
    lisp.eval("(gc)");
  }
  REQUIRE(kept);
  CHECK(kept->type() == "simple-error");
  CHECK(kept->message() == "held 1");
  CHECK_THAT(std::string(kept->what()), Catch::Contains("held 1"));
}

TEST_CASE("gc: two interpreters are independent", "[gc]") {
  tl::Interpreter a;
  tl::Interpreter b;
  a.eval("(defun only-in-a () :a)");
  a.eval("(defvar *shared-name* 1)");
  b.eval("(defvar *shared-name* 2)");
  CHECK(a.eval("(only-in-a)").repr() == ":a");
  try {
    b.eval("(only-in-a)");
    FAIL("only-in-a is defined in b");
  } catch (const tl::Error& e) {
    CHECK(e.type() == "undefined-function");
  }
  CHECK(b.eval("(fboundp 'only-in-a)").is_nil());
  CHECK(a.eval("*shared-name*").as_int() == 1);
  CHECK(b.eval("*shared-name*").as_int() == 2);
  // Collecting in one leaves the other's heap alone.
  tl::Value in_b = b.eval("(list :b (vector 1))");
  std::int64_t b_count = gc_count(b);
  a.eval("(dotimes (i " + n(300000) + ") (list i))");
  a.eval("(gc)");
  CHECK(gc_count(b) == b_count);
  CHECK(in_b.repr() == "(:b #(1))");
  // A value of one interpreter cannot be passed to the other.
  CHECK_THROWS_AS(a.call("car", {in_b}), tl::Error);
  // Destroying one leaves the other usable.
  {
    tl::Interpreter c;
    c.eval("(defun f () 1)");
  }
  CHECK(a.eval("(only-in-a)").repr() == ":a");
  CHECK(b.eval("(car (list 7))").as_int() == 7);
}

TEST_CASE("gc: forms the analyzer builds survive collections while it expands macros in them", "[gc]") {
  // A named let becomes a labels form built during analysis; the macros in its body run (and
  // may collect) while that form is still being read. Collect at every safe point.
  tl::Interpreter lisp;
  lisp.internal().heap.set_stress(1);
  CHECK(
      lisp.eval("(let walk ((i 0) (acc nil)) (if (< i 3) (walk (1+ i) (cons i acc)) (when t (reverse acc))))").repr() ==
      "(0 1 2)");
  CHECK(lisp.eval("(let walk ((xs (list 1 2 3))) (unless (null xs) (walk (cdr xs))))").is_nil());
  lisp.internal().heap.set_stress(0);
}
