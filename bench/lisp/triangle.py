# SPDX-License-Identifier: Apache-2.0
# TRIANGLE (Gabriel): the same program as triangle.lisp. Vectors are Python lists; the
# answers and final positions, pushed onto Lisp lists, are appended to Python lists (so the
# last one found is answer[-1], Lisp's (car *answer*)).
board = [1] * 16
sequence = [0] * 14
A = [1, 2, 4, 3, 5, 6, 1, 3, 6, 2, 5, 4, 11, 12, 13, 7, 8, 4, 4, 7, 11, 8, 12, 13, 6, 10,
     15, 9, 14, 13, 13, 14, 15, 9, 10, 6, 6]
B = [2, 4, 7, 5, 8, 9, 3, 6, 10, 5, 9, 8, 12, 13, 14, 8, 9, 5, 2, 4, 7, 5, 8, 9, 3, 6, 10,
     5, 9, 8, 12, 13, 14, 8, 9, 5, 5]
C = [4, 7, 11, 8, 12, 13, 6, 10, 15, 9, 14, 13, 13, 14, 15, 9, 10, 6, 1, 2, 4, 3, 5, 6, 1,
     3, 6, 2, 5, 4, 11, 12, 13, 7, 8, 4, 4]
answer = []
final = []


def last_position():
    for i in range(1, 16):
        if board[i] == 1:
            return i
    return 0


def try_move(i, depth):
    if depth == 14:
        lp = last_position()
        if lp not in final:
            final.append(lp)
        answer.append(sequence[1:])
        return True
    if board[A[i]] == 1 and board[B[i]] == 1 and board[C[i]] == 0:
        board[A[i]] = 0
        board[B[i]] = 0
        board[C[i]] = 1
        sequence[depth] = i
        depth1 = depth + 1
        for j in range(36):
            if try_move(j, depth1):
                break
        board[A[i]] = 1
        board[B[i]] = 1
        board[C[i]] = 0
    return False


def gogogo(i):
    answer.clear()
    final.clear()
    for k in range(16):
        board[k] = 1
    board[5] = 0
    try_move(i, 1)
    return len(answer)


def lisp_list(xs):
    return "(" + " ".join(str(x) for x in xs) + ")"


def main(iterations):
    total = 0
    for _ in range(iterations):
        total += gogogo(22)
    print(total, lisp_list(reversed(final)), lisp_list(answer[-1]))


main(1)
