-- SPDX-License-Identifier: Apache-2.0
-- TAKL (Gabriel): the same program as takl.lisp. A list is a chain of cons cells, each a
-- table {car, cdr}; nil is the empty list.
local function listn(n)
  if n ~= 0 then
    return {n, listn(n - 1)}
  end
  return nil
end

local function shorterp(x, y)
  return y ~= nil and (x == nil or shorterp(x[2], y[2]))
end

local function mas(x, y, z)
  if not shorterp(y, x) then
    return z
  end
  return mas(mas(x[2], y, z), mas(y[2], z, x), mas(z[2], x, y))
end

local function length(l)
  local n = 0
  while l ~= nil do
    n = n + 1
    l = l[2]
  end
  return n
end

local function main(iterations)
  local l18, l12, l6 = listn(18), listn(12), listn(6)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + length(mas(l18, l12, l6))
  end
  print(sum)
end

main(25)
