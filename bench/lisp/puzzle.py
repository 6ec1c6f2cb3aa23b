# SPDX-License-Identifier: Apache-2.0
# PUZZLE (Gabriel; Forest Baskett's): the same program as puzzle.lisp. Vectors are Python
# lists; the piece table P is a list of lists.
SIZE = 511
CLASSMAX = 3
TYPEMAX = 12
D = 8

piececount = [0] * (CLASSMAX + 1)
piececlass = [0] * (TYPEMAX + 1)
piecemax = [0] * (TYPEMAX + 1)
puzzle = [False] * (SIZE + 1)
p = [[False] * (SIZE + 1) for _ in range(TYPEMAX + 1)]
iii = 0
kount = 0


def fit(i, j):
    end = piecemax[i]
    piece = p[i]
    for k in range(end + 1):
        if piece[k]:
            if puzzle[j + k]:
                return False
    return True


def place(i, j):
    end = piecemax[i]
    piece = p[i]
    for k in range(end + 1):
        if piece[k]:
            puzzle[j + k] = True
    piececount[piececlass[i]] = piececount[piececlass[i]] - 1
    for k in range(j, SIZE + 1):
        if not puzzle[k]:
            return k
    return 0


def puzzle_remove(i, j):
    end = piecemax[i]
    piece = p[i]
    for k in range(end + 1):
        if piece[k]:
            puzzle[j + k] = False
    piececount[piececlass[i]] = piececount[piececlass[i]] + 1


def trial(j):
    global kount
    k = 0
    for i in range(TYPEMAX + 1):
        if piececount[piececlass[i]] != 0:
            if fit(i, j):
                k = place(i, j)
                if trial(k) or k == 0:
                    kount = kount + 1
                    return True
                else:
                    puzzle_remove(i, j)
    kount = kount + 1
    return False


def definepiece(iclass, ii, jj, kk):
    global iii
    index = 0
    for i in range(ii + 1):
        for j in range(jj + 1):
            for k in range(kk + 1):
                index = i + D * (j + D * k)
                p[iii][index] = True
    piececlass[iii] = iclass
    piecemax[iii] = index
    if iii != TYPEMAX:
        iii = iii + 1


def start():
    global iii, kount
    for m in range(SIZE + 1):
        puzzle[m] = True
    for i in range(1, 6):
        for j in range(1, 6):
            for k in range(1, 6):
                puzzle[i + D * (j + D * k)] = False
    for i in range(TYPEMAX + 1):
        for m in range(SIZE + 1):
            p[i][m] = False
    iii = 0
    definepiece(0, 3, 1, 0); definepiece(0, 1, 0, 3); definepiece(0, 0, 3, 1)
    definepiece(0, 1, 3, 0); definepiece(0, 3, 0, 1); definepiece(0, 0, 1, 3)
    definepiece(1, 2, 0, 0); definepiece(1, 0, 2, 0); definepiece(1, 0, 0, 2)
    definepiece(2, 1, 1, 0); definepiece(2, 1, 0, 1); definepiece(2, 0, 1, 1)
    definepiece(3, 1, 1, 1)
    piececount[0] = 13
    piececount[1] = 3
    piececount[2] = 1
    piececount[3] = 1
    m = 1 + D * (1 + D)
    n = 0
    kount = 0
    if fit(0, m):
        n = place(0, m)
    else:
        raise RuntimeError("puzzle: first piece does not fit")
    if trial(n):
        return kount
    raise RuntimeError("puzzle: failure")


def main(iterations):
    total = 0
    for _ in range(iterations):
        total += start()
    print(total)


main(5)
