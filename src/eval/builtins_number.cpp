// SPDX-License-Identifier: Apache-2.0
// Numeric builtins: arithmetic with overflow checks and float contagion, comparisons,
// rounding, transcendental functions, bit operations and random numbers.
#include <cmath>
#include <random>

#include "eval/builtins.h"

namespace tl::eval {

namespace {

using Args = Value*;
using N = std::uint32_t;

[[noreturn]] void overflow(Interp& in, const char* op) {
  in.error("integer-overflow", std::string(op) + ": integer overflow (result does not fit in 64 bits)");
}

void check_number(Interp& in, const char* fn, Args a, N i) {
  if (!a[i].is_number()) in.type_error(fn, static_cast<int>(i + 1), "a number", a[i]);
}

double as_double(Value v) { return v.is_int() ? static_cast<double>(v.i) : v.f; }

Value add2(Interp& in, Value a, Value b) {
  if (a.is_int() && b.is_int()) {
    std::int64_t r;
    if (__builtin_add_overflow(a.i, b.i, &r)) overflow(in, "+");
    return Value::integer(r);
  }
  return Value::real(as_double(a) + as_double(b));
}

Value sub2(Interp& in, Value a, Value b) {
  if (a.is_int() && b.is_int()) {
    std::int64_t r;
    if (__builtin_sub_overflow(a.i, b.i, &r)) overflow(in, "-");
    return Value::integer(r);
  }
  return Value::real(as_double(a) - as_double(b));
}

Value mul2(Interp& in, Value a, Value b) {
  if (a.is_int() && b.is_int()) {
    std::int64_t r;
    if (__builtin_mul_overflow(a.i, b.i, &r)) overflow(in, "*");
    return Value::integer(r);
  }
  return Value::real(as_double(a) * as_double(b));
}

Value div2(Interp& in, Value a, Value b) {
  if ((b.is_int() && b.i == 0) || (b.is_float() && b.f == 0.0)) {
    in.error("division-by-zero", "/: division by zero (" + in.repr(a) + " / " + in.repr(b) + ")");
  }
  if (a.is_int() && b.is_int()) {
    if (b.i == -1 && a.i == INT64_MIN) overflow(in, "/");
    if (a.i % b.i == 0) return Value::integer(a.i / b.i);
  }
  return Value::real(as_double(a) / as_double(b));
}

// Three-way compare of two numbers: -1, 0, 1 (2 when unordered, i.e. NaN).
int compare(Value a, Value b) {
  if (a.is_int() && b.is_int()) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  double x = as_double(a), y = as_double(b);
  if (x < y) return -1;
  if (x > y) return 1;
  if (x == y) return 0;
  return 2;
}

template <int kWant>
Value compare_chain(Interp& in, const char* fn, Args a, N n) {
  for (N i = 0; i < n; ++i) check_number(in, fn, a, i);
  for (N i = 0; i + 1 < n; ++i) {
    int c = compare(a[i], a[i + 1]);
    bool ok = false;
    switch (kWant) {
      case 0: ok = c == 0; break;                 // =
      case 1: ok = c == -1; break;                // <
      case 2: ok = c == 1; break;                 // >
      case 3: ok = c == -1 || c == 0; break;      // <=
      case 4: ok = c == 1 || c == 0; break;       // >=
    }
    if (!ok) return nil();
  }
  return in.t();
}

// Integer division helpers with the rounding of floor/ceiling/round/truncate.
enum class Round { Floor, Ceiling, Nearest, Truncate };

Value round_div(Interp& in, const char* fn, Args a, N n, Round mode) {
  check_number(in, fn, a, 0);
  if (n == 2) check_number(in, fn, a, 1);
  if (n == 2 && a[0].is_int() && a[1].is_int()) {
    std::int64_t x = a[0].i, y = a[1].i;
    if (y == 0) in.error("division-by-zero", std::string(fn) + ": division by zero");
    if (y == -1 && x == INT64_MIN) overflow(in, fn);
    std::int64_t q = x / y, r = x % y;
    switch (mode) {
      case Round::Floor:
        if (r != 0 && ((r < 0) != (y < 0))) --q;
        break;
      case Round::Ceiling:
        if (r != 0 && ((r < 0) == (y < 0))) ++q;
        break;
      case Round::Nearest: {
        // Round half to even, as Common Lisp does.
        std::int64_t fq = q - ((r != 0 && ((r < 0) != (y < 0))) ? 1 : 0);
        std::int64_t fr = x - fq * y;  // 0 <= |fr| < |y| with the sign of y
        __int128 twice = static_cast<__int128>(fr) * 2;
        __int128 ay = y;
        if (y < 0) { twice = -twice; ay = -ay; }
        if (twice > ay || (twice == ay && (fq % 2 != 0))) ++fq;
        q = fq;
        break;
      }
      case Round::Truncate: break;
    }
    // The remainder x - q*y is smaller than y in magnitude, so it fits.
    auto rem = static_cast<std::int64_t>(static_cast<__int128>(x) - static_cast<__int128>(q) * y);
    return in.two_values(Value::integer(q), Value::integer(rem));
  }
  // floor and its kin return the remainder second, as Common Lisp does: (floor 7 2) => 3, 1.
  if (a[0].is_int() && n == 1) return in.two_values(a[0], Value::integer(0));
  double x = as_double(a[0]);
  if (n == 2) {
    double y = as_double(a[1]);
    if (y == 0.0) in.error("division-by-zero", std::string(fn) + ": division by zero");
    x /= y;
  }
  double r = 0;
  switch (mode) {
    case Round::Floor: r = std::floor(x); break;
    case Round::Ceiling: r = std::ceil(x); break;
    case Round::Nearest: r = std::nearbyint(x); break;
    case Round::Truncate: r = std::trunc(x); break;
  }
  if (!std::isfinite(r) || r >= 9.2233720368547758e18 || r < -9.2233720368547758e18) {
    in.error("integer-overflow", std::string(fn) + ": " + in.repr(Value::real(x)) + " has no integer value in range");
  }
  double divisor = n == 2 ? as_double(a[1]) : 1.0;
  return in.two_values(Value::integer(static_cast<std::int64_t>(r)), Value::real(as_double(a[0]) - r * divisor));
}

Value math1(Interp& in, const char* fn, Args a, double (*f)(double)) {
  double x = arg_number(in, fn, a, 0);
  return Value::real(f(x));
}

}  // namespace

void mark_primitives(Interp& in, std::initializer_list<std::pair<const char*, Prim>> names, bool unary) {
  for (const auto& [name, prim] : names) {
    Native* native = as_native(in.intern(name)->value);
    native->prim = prim;
    native->prim_unary = unary;
  }
}

void register_number_builtins(Interp& in) {
  TL_BUILTIN(in, "+", 0, -1, "(+ NUMBER...)",
             "Sum of the numbers; 0 with none. Integers overflow with an error.\n"
             "  (+ 1 2 3)  ; => 6\n"
             "  (+ 1 2.5)  ; => 3.5",
             [](Interp& in, Args a, N n) -> Value {
               Value acc = Value::integer(0);
               for (N i = 0; i < n; ++i) {
                 check_number(in, "+", a, i);
                 acc = add2(in, acc, a[i]);
               }
               return acc;
             });
  TL_BUILTIN(in, "-", 1, -1, "(- NUMBER...)",
             "Negation of one number, or the first minus the rest.\n"
             "  (- 10 3 2)  ; => 5\n"
             "  (- 5)  ; => -5",
             [](Interp& in, Args a, N n) -> Value {
               for (N i = 0; i < n; ++i) check_number(in, "-", a, i);
               if (n == 1) return sub2(in, Value::integer(0), a[0]);
               Value acc = a[0];
               for (N i = 1; i < n; ++i) acc = sub2(in, acc, a[i]);
               return acc;
             });
  TL_BUILTIN(in, "*", 0, -1, "(* NUMBER...)",
             "Product of the numbers; 1 with none.\n"
             "  (* 2 3 4)  ; => 24\n"
             "  (*)  ; => 1",
             [](Interp& in, Args a, N n) -> Value {
               Value acc = Value::integer(1);
               for (N i = 0; i < n; ++i) {
                 check_number(in, "*", a, i);
                 acc = mul2(in, acc, a[i]);
               }
               return acc;
             });
  TL_BUILTIN(in, "/", 1, -1, "(/ NUMBER...)",
             "Reciprocal of one number, or the first divided by the rest. Integer division that is "
             "exact gives an integer, otherwise a float. Division by zero is an error.\n"
             "  (/ 12 4)  ; => 3\n"
             "  (/ 7 2)  ; => 3.5\n"
             "  (/ 4)  ; => 0.25",
             [](Interp& in, Args a, N n) -> Value {
               for (N i = 0; i < n; ++i) check_number(in, "/", a, i);
               if (n == 1) return div2(in, Value::integer(1), a[0]);
               Value acc = a[0];
               for (N i = 1; i < n; ++i) acc = div2(in, acc, a[i]);
               return acc;
             });
  TL_BUILTIN(in, "=", 1, -1, "(= NUMBER...)",
             "True when all numbers are equal (1 = 1.0).\n"
             "  (= 1 1.0)  ; => t\n"
             "  (= 2 2 3)  ; => nil",
             [](Interp& in, Args a, N n) { return compare_chain<0>(in, "=", a, n); });
  TL_BUILTIN(in, "<", 1, -1, "(< NUMBER...)",
             "True when the numbers increase strictly.\n"
             "  (< 1 2 3)  ; => t\n"
             "  (< 1 3 2)  ; => nil",
             [](Interp& in, Args a, N n) { return compare_chain<1>(in, "<", a, n); });
  TL_BUILTIN(in, ">", 1, -1, "(> NUMBER...)",
             "True when the numbers decrease strictly.\n"
             "  (> 3 2 1)  ; => t",
             [](Interp& in, Args a, N n) { return compare_chain<2>(in, ">", a, n); });
  TL_BUILTIN(in, "<=", 1, -1, "(<= NUMBER...)",
             "True when the numbers never decrease.\n"
             "  (<= 1 1 2)  ; => t",
             [](Interp& in, Args a, N n) { return compare_chain<3>(in, "<=", a, n); });
  TL_BUILTIN(in, ">=", 1, -1, "(>= NUMBER...)",
             "True when the numbers never increase.\n"
             "  (>= 3 3 1)  ; => t",
             [](Interp& in, Args a, N n) { return compare_chain<4>(in, ">=", a, n); });
  TL_BUILTIN(in, "/=", 1, -1, "(/= NUMBER...)",
             "True when no two of the numbers are equal.\n"
             "  (/= 1 2 3)  ; => t\n"
             "  (/= 1 2 1)  ; => nil",
             [](Interp& in, Args a, N n) -> Value {
               for (N i = 0; i < n; ++i) check_number(in, "/=", a, i);
               for (N i = 0; i < n; ++i)
                 for (N j = i + 1; j < n; ++j)
                   if (compare(a[i], a[j]) == 0) return nil();
               return in.t();
             });
  TL_BUILTIN(in, "1+", 1, 1, "(1+ NUMBER)",
             "NUMBER plus one.\n"
             "  (1+ 41)  ; => 42",
             [](Interp& in, Args a, N) -> Value {
               check_number(in, "1+", a, 0);
               if (a[0].is_int() && a[0].i == INT64_MAX) overflow(in, "1+");
               return add2(in, a[0], Value::integer(1));
             });
  TL_BUILTIN(in, "1-", 1, 1, "(1- NUMBER)",
             "NUMBER minus one.\n"
             "  (1- 10)  ; => 9",
             [](Interp& in, Args a, N) -> Value {
               check_number(in, "1-", a, 0);
               if (a[0].is_int() && a[0].i == INT64_MIN) overflow(in, "1-");
               return sub2(in, a[0], Value::integer(1));
             });
  TL_BUILTIN(in, "mod", 2, 2, "(mod X Y)",
             "Remainder of floor division: has the sign of Y.\n"
             "  (mod 7 3)  ; => 1\n"
             "  (mod -7 3)  ; => 2",
             [](Interp& in, Args a, N) -> Value {
               check_number(in, "mod", a, 0);
               check_number(in, "mod", a, 1);
               if (a[0].is_int() && a[1].is_int()) {
                 if (a[1].i == 0) in.error("division-by-zero", "mod: division by zero");
                 if (a[1].i == -1) return Value::integer(0);
                 std::int64_t r = a[0].i % a[1].i;
                 if (r != 0 && ((r < 0) != (a[1].i < 0))) r += a[1].i;
                 return Value::integer(r);
               }
               double y = as_double(a[1]);
               if (y == 0.0) in.error("division-by-zero", "mod: division by zero");
               double r = std::fmod(as_double(a[0]), y);
               if (r != 0 && ((r < 0) != (y < 0))) r += y;
               return Value::real(r);
             });
  TL_BUILTIN(in, "rem", 2, 2, "(rem X Y)",
             "Remainder of truncating division: has the sign of X.\n"
             "  (rem 7 3)  ; => 1\n"
             "  (rem -7 3)  ; => -1",
             [](Interp& in, Args a, N) -> Value {
               check_number(in, "rem", a, 0);
               check_number(in, "rem", a, 1);
               if (a[0].is_int() && a[1].is_int()) {
                 if (a[1].i == 0) in.error("division-by-zero", "rem: division by zero");
                 if (a[1].i == -1) return Value::integer(0);
                 return Value::integer(a[0].i % a[1].i);
               }
               double y = as_double(a[1]);
               if (y == 0.0) in.error("division-by-zero", "rem: division by zero");
               return Value::real(std::fmod(as_double(a[0]), y));
             });
  TL_BUILTIN(in, "floor", 1, 2, "(floor X [DIVISOR])",
             "Largest integer not above X (or X/DIVISOR); the remainder is the second value.\n"
             "  (floor 2.7)  ; => 2\n"
             "  (floor -2.5)  ; => -3\n"
             "  (multiple-value-list (floor 7 2))  ; => (3 1)",
             [](Interp& in, Args a, N n) { return round_div(in, "floor", a, n, Round::Floor); });
  TL_BUILTIN(in, "ceiling", 1, 2, "(ceiling X [DIVISOR])",
             "Smallest integer not below X (or X/DIVISOR); the remainder is the second value.\n"
             "  (ceiling 2.1)  ; => 3\n"
             "  (multiple-value-list (ceiling 7 2))  ; => (4 -1)",
             [](Interp& in, Args a, N n) { return round_div(in, "ceiling", a, n, Round::Ceiling); });
  TL_BUILTIN(in, "round", 1, 2, "(round X [DIVISOR])",
             "Nearest integer to X (or X/DIVISOR); halves go to even; the remainder is the second value.\n"
             "  (round 2.5)  ; => 2\n"
             "  (round 3.5)  ; => 4\n"
             "  (multiple-value-list (round 7 2))  ; => (4 -1)",
             [](Interp& in, Args a, N n) { return round_div(in, "round", a, n, Round::Nearest); });
  TL_BUILTIN(in, "truncate", 1, 2, "(truncate X [DIVISOR])",
             "X (or X/DIVISOR) with the fraction dropped; the remainder is the second value.\n"
             "  (truncate -2.7)  ; => -2\n"
             "  (multiple-value-list (truncate -7 2))  ; => (-3 -1)",
             [](Interp& in, Args a, N n) { return round_div(in, "truncate", a, n, Round::Truncate); });
  TL_BUILTIN(in, "abs", 1, 1, "(abs X)",
             "Absolute value.\n"
             "  (abs -7)  ; => 7\n"
             "  (abs -2.5)  ; => 2.5",
             [](Interp& in, Args a, N) -> Value {
               check_number(in, "abs", a, 0);
               if (a[0].is_int()) {
                 if (a[0].i == INT64_MIN) overflow(in, "abs");
                 return Value::integer(a[0].i < 0 ? -a[0].i : a[0].i);
               }
               return Value::real(std::fabs(a[0].f));
             });
  TL_BUILTIN(in, "min", 1, -1, "(min NUMBER...)",
             "The smallest number.\n"
             "  (min 3 7 2)  ; => 2",
             [](Interp& in, Args a, N n) -> Value {
               Value best = a[0];
               for (N i = 0; i < n; ++i) {
                 check_number(in, "min", a, i);
                 if (compare(a[i], best) == -1) best = a[i];
               }
               return best;
             });
  TL_BUILTIN(in, "max", 1, -1, "(max NUMBER...)",
             "The largest number.\n"
             "  (max 3 7 2)  ; => 7",
             [](Interp& in, Args a, N n) -> Value {
               Value best = a[0];
               for (N i = 0; i < n; ++i) {
                 check_number(in, "max", a, i);
                 if (compare(a[i], best) == 1) best = a[i];
               }
               return best;
             });
  TL_BUILTIN(in, "expt", 2, 2, "(expt BASE POWER)",
             "BASE raised to POWER; exact for integers with POWER >= 0.\n"
             "  (expt 2 10)  ; => 1024\n"
             "  (expt 2 -1)  ; => 0.5\n"
             "  (expt 4 0.5)  ; => 2.0",
             [](Interp& in, Args a, N) -> Value {
               check_number(in, "expt", a, 0);
               check_number(in, "expt", a, 1);
               if (a[0].is_int() && a[1].is_int() && a[1].i >= 0) {
                 std::int64_t base = a[0].i, e = a[1].i, r = 1;
                 while (e > 0) {
                   if (e & 1) {
                     if (__builtin_mul_overflow(r, base, &r)) overflow(in, "expt");
                   }
                   e >>= 1;
                   if (e > 0 && __builtin_mul_overflow(base, base, &base)) overflow(in, "expt");
                 }
                 return Value::integer(r);
               }
               if (a[0].is_int() && a[0].i == 0 && a[1].is_int() && a[1].i < 0) {
                 in.error("division-by-zero", "expt: zero to a negative power");
               }
               return Value::real(std::pow(as_double(a[0]), as_double(a[1])));
             });
  TL_BUILTIN(in, "sqrt", 1, 1, "(sqrt X)",
             "Square root of X >= 0, as a float.\n"
             "  (sqrt 16)  ; => 4.0\n"
             "  (sqrt 2.25)  ; => 1.5",
             [](Interp& in, Args a, N) -> Value {
               double x = arg_number(in, "sqrt", a, 0);
               if (x < 0) in.error("arithmetic-error", "sqrt: negative argument " + in.repr(a[0]));
               return Value::real(std::sqrt(x));
             });
  TL_BUILTIN(in, "isqrt", 1, 1, "(isqrt N)",
             "Largest integer whose square is at most N >= 0.\n"
             "  (isqrt 17)  ; => 4",
             [](Interp& in, Args a, N) -> Value {
               std::int64_t x = arg_int(in, "isqrt", a, 0);
               if (x < 0) in.error("arithmetic-error", "isqrt: negative argument");
               auto r = static_cast<std::int64_t>(std::sqrt(static_cast<double>(x)));
               while (r > 0 && r > x / r) --r;
               while ((r + 1) <= x / (r + 1)) ++r;
               return Value::integer(r);
             });
  TL_BUILTIN(in, "exp", 1, 1, "(exp X)",
             "e raised to X.\n"
             "  (exp 0)  ; => 1.0\n"
             "  (exp 1)  ; => 2.718281828459045",
             [](Interp& in, Args a, N) { return math1(in, "exp", a, std::exp); });
  TL_BUILTIN(in, "log", 1, 2, "(log X [BASE])",
             "Natural logarithm of X > 0, or its logarithm in BASE.\n"
             "  (log 1)  ; => 0.0\n"
             "  (log 8 2)  ; => 3.0",
             [](Interp& in, Args a, N n) -> Value {
               double x = arg_number(in, "log", a, 0);
               if (x <= 0) in.error("arithmetic-error", "log: argument must be positive, got " + in.repr(a[0]));
               double r = std::log(x);
               if (n == 2) {
                 double b = arg_number(in, "log", a, 1);
                 if (b <= 0 || b == 1) in.error("arithmetic-error", "log: bad base " + in.repr(a[1]));
                 r /= std::log(b);
               }
               return Value::real(r);
             });
  TL_BUILTIN(in, "sin", 1, 1, "(sin X)",
             "Sine of X radians.\n"
             "  (sin (/ pi 2))  ; => 1.0",
             [](Interp& in, Args a, N) { return math1(in, "sin", a, std::sin); });
  TL_BUILTIN(in, "cos", 1, 1, "(cos X)",
             "Cosine of X radians.\n"
             "  (cos pi)  ; => -1.0",
             [](Interp& in, Args a, N) { return math1(in, "cos", a, std::cos); });
  TL_BUILTIN(in, "tan", 1, 1, "(tan X)",
             "Tangent of X radians.\n"
             "  (tan 0.0)  ; => 0.0",
             [](Interp& in, Args a, N) { return math1(in, "tan", a, std::tan); });
  TL_BUILTIN(in, "asin", 1, 1, "(asin X)",
             "Arc sine.\n"
             "  (= (asin 1) (/ pi 2))  ; => t",
             [](Interp& in, Args a, N) { return math1(in, "asin", a, std::asin); });
  TL_BUILTIN(in, "acos", 1, 1, "(acos X)",
             "Arc cosine.\n"
             "  (acos 1)  ; => 0.0\n"
             "  (= (acos -1) pi)  ; => t",
             [](Interp& in, Args a, N) { return math1(in, "acos", a, std::acos); });
  TL_BUILTIN(in, "atan", 1, 2, "(atan Y [X])",
             "Arc tangent of Y, or of Y/X using both signs.\n"
             "  (atan 1 1)  ; => 0.7853981633974483\n"
             "  (atan 0 -1)  ; => 3.141592653589793",
             [](Interp& in, Args a, N n) -> Value {
               double y = arg_number(in, "atan", a, 0);
               if (n == 2) return Value::real(std::atan2(y, arg_number(in, "atan", a, 1)));
               return Value::real(std::atan(y));
             });
  TL_BUILTIN(in, "sinh", 1, 1, "(sinh X)",
             "Hyperbolic sine.\n"
             "  (sinh 0)  ; => 0.0",
             [](Interp& in, Args a, N) { return math1(in, "sinh", a, std::sinh); });
  TL_BUILTIN(in, "cosh", 1, 1, "(cosh X)",
             "Hyperbolic cosine.\n"
             "  (cosh 0)  ; => 1.0",
             [](Interp& in, Args a, N) { return math1(in, "cosh", a, std::cosh); });
  TL_BUILTIN(in, "tanh", 1, 1, "(tanh X)",
             "Hyperbolic tangent.\n"
             "  (tanh 0)  ; => 0.0\n"
             "  (tanh 100)  ; => 1.0",
             [](Interp& in, Args a, N) { return math1(in, "tanh", a, std::tanh); });
  TL_BUILTIN(in, "float", 1, 1, "(float X)",
             "X converted to a float.\n"
             "  (float 3)  ; => 3.0",
             [](Interp& in, Args a, N) { return Value::real(arg_number(in, "float", a, 0)); });
  TL_BUILTIN(in, "ash", 2, 2, "(ash N COUNT)",
             "N shifted left by COUNT bits (right when negative).\n"
             "  (ash 1 4)  ; => 16\n"
             "  (ash 16 -2)  ; => 4",
             [](Interp& in, Args a, N) -> Value {
               std::int64_t x = arg_int(in, "ash", a, 0), c = arg_int(in, "ash", a, 1);
               if (c <= -64) return Value::integer(x < 0 ? -1 : 0);
               if (c < 0) return Value::integer(x >> -c);
               if (x == 0) return Value::integer(0);
               // The shift is exact when x fits in 64 - c bits (sign included).
               if (c >= 64 || x > (INT64_MAX >> c) || x < (INT64_MIN >> c)) overflow(in, "ash");
               return Value::integer(static_cast<std::int64_t>(static_cast<std::uint64_t>(x) << c));
             });
  TL_BUILTIN(in, "logand", 0, -1, "(logand N...)",
             "Bitwise and.\n"
             "  (logand 12 10)  ; => 8",
             [](Interp& in, Args a, N n) -> Value {
               std::int64_t r = -1;
               for (N i = 0; i < n; ++i) r &= arg_int(in, "logand", a, static_cast<int>(i));
               return Value::integer(r);
             });
  TL_BUILTIN(in, "logior", 0, -1, "(logior N...)",
             "Bitwise inclusive or.\n"
             "  (logior 12 10)  ; => 14",
             [](Interp& in, Args a, N n) -> Value {
               std::int64_t r = 0;
               for (N i = 0; i < n; ++i) r |= arg_int(in, "logior", a, static_cast<int>(i));
               return Value::integer(r);
             });
  TL_BUILTIN(in, "logxor", 0, -1, "(logxor N...)",
             "Bitwise exclusive or.\n"
             "  (logxor 12 10)  ; => 6",
             [](Interp& in, Args a, N n) -> Value {
               std::int64_t r = 0;
               for (N i = 0; i < n; ++i) r ^= arg_int(in, "logxor", a, static_cast<int>(i));
               return Value::integer(r);
             });
  TL_BUILTIN(in, "random", 1, 1, "(random LIMIT)",
             "A pseudo-random number in [0, LIMIT): an integer for an integer LIMIT, else a float. "
             "Seeded per interpreter with (random-seed N).\n"
             "  (let ((r (random 10))) (and (integerp r) (<= 0 r 9)))  ; => t\n"
             "  (floatp (random 1.0))  ; => t",
             [](Interp& in, Args a, N) -> Value {
               if (a[0].is_int()) {
                 if (a[0].i <= 0) in.error("type-error", "random: limit must be positive, got " + in.repr(a[0]));
                 std::uniform_int_distribution<std::int64_t> d(0, a[0].i - 1);
                 return Value::integer(d(in.rng));
               }
               double lim = arg_number(in, "random", a, 0);
               if (lim <= 0) in.error("type-error", "random: limit must be positive, got " + in.repr(a[0]));
               std::uniform_real_distribution<double> d(0, lim);
               return Value::real(d(in.rng));
             });
  TL_BUILTIN(in, "random-seed", 1, 1, "(random-seed N)",
             "Reseeds this interpreter's `random`.\n"
             "  (progn (random-seed 42) (let ((a (random 100))) (random-seed 42) (= a (random 100))))  ; => t",
             [](Interp& in, Args a, N) -> Value {
               in.rng.seed(static_cast<std::uint64_t>(arg_int(in, "random-seed", a, 0)));
               return nil();
             });
  // The evaluator computes these inline when both arguments are numbers (eval.cpp, fast_prim),
  // and the one-argument ones the same way ((1- n) in a recursion, (not x) in a test).
  mark_primitives(in, {{"+", Prim::Add},
                       {"-", Prim::Sub},
                       {"*", Prim::Mul},
                       {"<", Prim::Lt},
                       {">", Prim::Gt},
                       {"<=", Prim::Le},
                       {">=", Prim::Ge},
                       {"=", Prim::NumEq},
                       {"eq", Prim::Eq}});
  mark_primitives(in, {{"1+", Prim::Add}, {"1-", Prim::Sub}, {"not", Prim::Not}, {"null", Prim::Not}}, true);
  // The numeric constants, documented as defconstant documents them.
  auto constant = [&](const char* name, Value value, const char* doc) {
    Symbol* s = in.intern(name);
    in.set_global(s, value);
    s->sym_flags |= kSymConstant;
    s->doc = in.make_string(doc);
  };
  constant("pi", Value::real(3.14159265358979323846),
           "The ratio of a circle's circumference to its diameter, as a double.\n"
           "  (/ (round (* pi 1000)) 1000.0)  ; => 3.142");
  constant("most-positive-fixnum", Value::integer(INT64_MAX),
           "The largest integer, 2^63 - 1: integers are 64-bit and arithmetic past it is an integer-overflow "
           "error.\n  (= most-positive-fixnum (- (expt 2 62) 1 (- (expt 2 62))))  ; => t");
  constant("most-negative-fixnum", Value::integer(INT64_MIN),
           "The smallest integer, -2^63.\n  (= most-negative-fixnum (- -1 most-positive-fixnum))  ; => t");
}

}  // namespace tl::eval
