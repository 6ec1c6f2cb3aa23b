-- SPDX-License-Identifier: Apache-2.0
-- FIB: doubly recursive Fibonacci, fib(25) repeated; the same program as fib.lisp.
local function fib(n)
  if n < 2 then
    return n
  end
  return fib(n - 1) + fib(n - 2)
end

local function main(iterations)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + fib(25)
  end
  print(sum)
end

main(80)
