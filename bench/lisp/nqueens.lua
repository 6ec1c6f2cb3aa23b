-- SPDX-License-Identifier: Apache-2.0
-- NQUEENS: the same program as nqueens.lisp. A list is a chain of cons cells, each a table
-- {car, cdr}; nil is the empty list; append copies its first list as Lisp's does.
local function iota1(n)
  local l = nil
  for i = n, 1, -1 do
    l = {i, l}
  end
  return l
end

local function append(x, y)
  if x == nil then
    return y
  end
  return {x[1], append(x[2], y)}
end

local function ok(row, dist, placed)
  return placed == nil or
    (placed[1] ~= row + dist and placed[1] ~= row - dist and ok(row, dist + 1, placed[2]))
end

local function try_queens(x, y, z)
  if x == nil then
    if y == nil then return 1 else return 0 end
  end
  local a = 0
  if ok(x[1], 1, z) then
    a = try_queens(append(x[2], y), nil, {x[1], z})
  end
  return a + try_queens(x[2], {x[1], y}, z)
end

local function queens(n)
  return try_queens(iota1(n), nil, nil)
end

local function main(iterations)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + queens(8)
  end
  print(sum)
end

main(200)
