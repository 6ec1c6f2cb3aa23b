-- SPDX-License-Identifier: Apache-2.0
-- DIV-REC (Gabriel): the same program as div-rec.lisp. A list is a chain of cons cells,
-- each a table {car, cdr}; nil is the empty list and false Lisp's nil in a car.
local function create_n(n)
  local a = nil
  for _ = 1, n do
    a = {false, a}
  end
  return a
end

local function recursive_div2(l)
  if l == nil then
    return nil
  end
  return {l[1], recursive_div2(l[2][2])}
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
  local ll = create_n(200)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + length(recursive_div2(ll))
    recursive_div2(ll)
    recursive_div2(ll)
    recursive_div2(ll)
  end
  print(sum)
end

main(20000)
