-- SPDX-License-Identifier: Apache-2.0
-- STRBUILD: the same program as strbuild.lisp. Part 1 collects the pieces in a table and
-- joins them with table.concat (Lua's usual string builder); part 2 concatenates and takes
-- substrings.
local function build(n)
  local parts = {}
  for i = 0, n - 1 do
    parts[#parts + 1] = tostring(i)
    parts[#parts + 1] = ","
  end
  return table.concat(parts)
end

local s = "abcdef"

local function grow()
  s = "123" .. s .. "456" .. s .. "789"
  s = string.sub(s, #s // 2 + 1, #s) .. string.sub(s, 1, #s // 2 + 1)
  return s
end

local function trial(n)
  while not (#s > n) do
    grow()
  end
  return #s
end

local function main(iterations)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + #build(1000)
    s = "abcdef"
    sum = sum + trial(4000)
  end
  print(sum)
end

main(1000)
