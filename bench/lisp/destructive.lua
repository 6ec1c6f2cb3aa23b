-- SPDX-License-Identifier: Apache-2.0
-- DESTRUCTIVE (Gabriel): the same program as destructive.lisp. A list is a chain of mutable
-- cons cells, each a table {car, cdr} (fields 1 and 2); nil is the empty list, and false
-- stands for Lisp's nil in a car.
local function length(l)
  local n = 0
  while l ~= nil do
    n = n + 1
    l = l[2]
  end
  return n
end

local function nconc(x, y)
  if x == nil then
    return y
  end
  local last = x
  while last[2] ~= nil do
    last = last[2]
  end
  last[2] = y
  return x
end

local function destructive(n, m)
  local l = nil
  for _ = 1, 10 do
    l = {false, l}
  end
  for i = n, 1, -1 do
    if not l[1] then
      local ll = l
      while ll ~= nil do
        if not ll[1] then
          ll[1] = {false, nil}
        end
        local a = nil
        for _ = 1, m do
          a = {false, a}
        end
        nconc(ll[1], a)
        ll = ll[2]
      end
    else
      local l1, l2 = l, l[2]
      while l2 ~= nil do
        local a = l2[1]
        for _ = 1, length(l2[1]) // 2 do
          a[1] = i
          a = a[2]
        end
        local n1 = length(l1[1] or nil) // 2
        local tail
        if n1 == 0 then
          l1[1] = false
          tail = nil
        else
          local b = l1[1]
          for _ = 1, n1 - 1 do
            b[1] = i
            b = b[2]
          end
          tail = b[2]
          b[2] = nil
        end
        a[2] = tail
        l1, l2 = l1[2], l2[2]
      end
    end
  end
  return l
end

local function main(iterations)
  local cells, sum = 0, 0
  for _ = 1, iterations do
    local sub = destructive(600, 50)
    while sub ~= nil do
      local x = sub[1] or nil
      while x ~= nil do
        cells = cells + 1
        if x[1] then
          sum = sum + x[1]
        end
        x = x[2]
      end
      sub = sub[2]
    end
  end
  print(cells .. " " .. sum)
end

main(40)
