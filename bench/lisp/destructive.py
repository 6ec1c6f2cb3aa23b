# SPDX-License-Identifier: Apache-2.0
# DESTRUCTIVE (Gabriel): the same program as destructive.lisp. The lists are surgically
# altered, so a list is a chain of mutable Cons cells; None is the empty list.
class Cons:
    __slots__ = ("car", "cdr")

    def __init__(self, car, cdr):
        self.car = car
        self.cdr = cdr


def length(l):
    n = 0
    while l is not None:
        n += 1
        l = l.cdr
    return n


def nconc(x, y):
    if x is None:
        return y
    last = x
    while last.cdr is not None:
        last = last.cdr
    last.cdr = y
    return x


def destructive(n, m):
    l = None
    for _ in range(10):
        l = Cons(None, l)
    for i in range(n, 0, -1):
        if l.car is None:
            ll = l
            while ll is not None:
                if ll.car is None:
                    ll.car = Cons(None, None)
                a = None
                for _ in range(m):
                    a = Cons(None, a)
                nconc(ll.car, a)
                ll = ll.cdr
        else:
            l1, l2 = l, l.cdr
            while l2 is not None:
                a = l2.car
                for _ in range(length(l2.car) // 2):
                    a.car = i
                    a = a.cdr
                n1 = length(l1.car) // 2
                if n1 == 0:
                    l1.car = None
                    tail = l1.car
                else:
                    b = l1.car
                    for _ in range(n1 - 1):
                        b.car = i
                        b = b.cdr
                    tail = b.cdr
                    b.cdr = None
                a.cdr = tail
                l1, l2 = l1.cdr, l2.cdr
    return l


def main(iterations):
    cells = total = 0
    for _ in range(iterations):
        sub = destructive(600, 50)
        while sub is not None:
            x = sub.car
            while x is not None:
                cells += 1
                if x.car is not None:
                    total += x.car
                x = x.cdr
            sub = sub.cdr
    print(cells, total)


main(40)
