# SPDX-License-Identifier: Apache-2.0
# DERIV (Gabriel): the same program as deriv.lisp. An expression is a Python list whose
# first element is the operator; symbols are strings. mapcar over (cdr a) is a list
# comprehension over a[1:].
def deriv_aux(a):
    return ["/", deriv(a), a]


def deriv(a):
    if not isinstance(a, list):
        return 1 if a == "x" else 0
    op = a[0]
    if op == "+":
        return ["+"] + [deriv(b) for b in a[1:]]
    if op == "-":
        return ["-"] + [deriv(b) for b in a[1:]]
    if op == "*":
        return ["*", a, ["+"] + [deriv_aux(b) for b in a[1:]]]
    if op == "/":
        return ["-", ["/", deriv(a[1]), a[2]], ["/", a[1], ["*", a[2], a[2], deriv(a[2])]]]
    return "error"


def to_sexp(a):
    if isinstance(a, list):
        return "(" + " ".join(to_sexp(b) for b in a) + ")"
    return str(a)


def main(iterations):
    expr = ["+", ["*", 3, "x", "x"], ["*", "a", "x", "x"], ["*", "b", "x"], 5]
    result = None
    for _ in range(iterations):
        result = deriv(expr)
        deriv(expr)
        deriv(expr)
        deriv(expr)
        deriv(expr)
    print(to_sexp(result))


main(60000)
