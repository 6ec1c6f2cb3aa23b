# SPDX-License-Identifier: Apache-2.0
# DIV-ITER (Gabriel): the same program as div-iter.lisp. A list is a chain of cons cells,
# each a tuple (car, cdr); None is the empty list.
def create_n(n):
    a = None
    for _ in range(n):
        a = (None, a)
    return a


def iterative_div2(l):
    a = None
    while l is not None:
        a = (l[0], a)
        l = l[1][1]
    return a


def length(l):
    n = 0
    while l is not None:
        n += 1
        l = l[1]
    return n


def main(iterations):
    ll = create_n(200)
    total = 0
    for _ in range(iterations):
        total += length(iterative_div2(ll))
        iterative_div2(ll)
        iterative_div2(ll)
        iterative_div2(ll)
    print(total)


main(15000)
