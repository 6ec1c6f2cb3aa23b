# SPDX-License-Identifier: Apache-2.0
# DIV-REC (Gabriel): the same program as div-rec.lisp. A list is a chain of cons cells,
# each a tuple (car, cdr); None is the empty list.
def create_n(n):
    a = None
    for _ in range(n):
        a = (None, a)
    return a


def recursive_div2(l):
    if l is None:
        return None
    return (l[0], recursive_div2(l[1][1]))


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
        total += length(recursive_div2(ll))
        recursive_div2(ll)
        recursive_div2(ll)
        recursive_div2(ll)
    print(total)


main(20000)
