# SPDX-License-Identifier: Apache-2.0
# STRBUILD: the same program as strbuild.lisp. Part 1 collects the pieces in a list and
# joins them (Python's usual string builder); part 2 concatenates and slices.
def build(n):
    parts = []
    for i in range(n):
        parts.append(str(i))
        parts.append(",")
    return "".join(parts)


s = "abcdef"


def grow():
    global s
    s = "123" + s + "456" + s + "789"
    s = s[len(s) // 2:len(s)] + s[0:len(s) // 2 + 1]
    return s


def trial(n):
    while not len(s) > n:
        grow()
    return len(s)


def main(iterations):
    global s
    total = 0
    for _ in range(iterations):
        total += len(build(1000))
        s = "abcdef"
        total += trial(4000)
    print(total)


main(1000)
