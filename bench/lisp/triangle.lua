-- SPDX-License-Identifier: Apache-2.0
-- TRIANGLE (Gabriel): the same program as triangle.lisp. Vectors are Lua tables indexed
-- from 0 as in the original; the answers and final positions, pushed onto Lisp lists, are
-- appended to Lua arrays (so the last one found is answer[#answer], Lisp's (car *answer*)).
local function vec(t)  -- a Lua array (from 1) as a table indexed from 0
  local v = {}
  for i = 1, #t do
    v[i - 1] = t[i]
  end
  return v
end

local board = vec({1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1})
local sequence = vec({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
local A = vec({1, 2, 4, 3, 5, 6, 1, 3, 6, 2, 5, 4, 11, 12, 13, 7, 8, 4, 4, 7, 11, 8, 12, 13,
               6, 10, 15, 9, 14, 13, 13, 14, 15, 9, 10, 6, 6})
local B = vec({2, 4, 7, 5, 8, 9, 3, 6, 10, 5, 9, 8, 12, 13, 14, 8, 9, 5, 2, 4, 7, 5, 8, 9, 3,
               6, 10, 5, 9, 8, 12, 13, 14, 8, 9, 5, 5})
local C = vec({4, 7, 11, 8, 12, 13, 6, 10, 15, 9, 14, 13, 13, 14, 15, 9, 10, 6, 1, 2, 4, 3,
               5, 6, 1, 3, 6, 2, 5, 4, 11, 12, 13, 7, 8, 4, 4})
local answer, final = {}, {}

local function last_position()
  for i = 1, 15 do
    if board[i] == 1 then
      return i
    end
  end
  return 0
end

local function member(x, t)
  for i = 1, #t do
    if t[i] == x then
      return true
    end
  end
  return false
end

local function try_move(i, depth)
  if depth == 14 then
    local lp = last_position()
    if not member(lp, final) then
      final[#final + 1] = lp
    end
    local s = {}
    for k = 1, 13 do
      s[k] = sequence[k]
    end
    answer[#answer + 1] = s
    return true
  end
  if board[A[i]] == 1 and board[B[i]] == 1 and board[C[i]] == 0 then
    board[A[i]] = 0
    board[B[i]] = 0
    board[C[i]] = 1
    sequence[depth] = i
    local depth1 = depth + 1
    for j = 0, 35 do
      if try_move(j, depth1) then
        break
      end
    end
    board[A[i]] = 1
    board[B[i]] = 1
    board[C[i]] = 0
  end
  return false
end

local function gogogo(i)
  answer, final = {}, {}
  for k = 0, 15 do
    board[k] = 1
  end
  board[5] = 0
  try_move(i, 1)
  return #answer
end

local function lisp_list(t)
  return "(" .. table.concat(t, " ") .. ")"
end

local function main(iterations)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + gogogo(22)
  end
  local rfinal = {}
  for k = #final, 1, -1 do
    rfinal[#rfinal + 1] = final[k]
  end
  print(sum .. " " .. lisp_list(rfinal) .. " " .. lisp_list(answer[#answer]))
end

main(1)
