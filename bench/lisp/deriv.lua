-- SPDX-License-Identifier: Apache-2.0
-- DERIV (Gabriel): the same program as deriv.lisp. An expression is a Lua array whose first
-- element is the operator; symbols are strings. mapcar over (cdr a) is a loop from index 2.
local deriv

local function deriv_aux(a)
  return {"/", deriv(a), a}
end

local function map_rest(f, op, a)
  local r = {op}
  for i = 2, #a do
    r[i] = f(a[i])
  end
  return r
end

function deriv(a)
  if type(a) ~= "table" then
    if a == "x" then return 1 else return 0 end
  end
  local op = a[1]
  if op == "+" then
    return map_rest(deriv, "+", a)
  elseif op == "-" then
    return map_rest(deriv, "-", a)
  elseif op == "*" then
    return {"*", a, map_rest(deriv_aux, "+", a)}
  elseif op == "/" then
    return {"-", {"/", deriv(a[2]), a[3]}, {"/", a[2], {"*", a[3], a[3], deriv(a[3])}}}
  end
  return "error"
end

local function to_sexp(a)
  if type(a) == "table" then
    local parts = {}
    for i = 1, #a do
      parts[i] = to_sexp(a[i])
    end
    return "(" .. table.concat(parts, " ") .. ")"
  end
  return tostring(a)
end

local function main(iterations)
  local expr = {"+", {"*", 3, "x", "x"}, {"*", "a", "x", "x"}, {"*", "b", "x"}, 5}
  local result
  for _ = 1, iterations do
    result = deriv(expr)
    deriv(expr)
    deriv(expr)
    deriv(expr)
    deriv(expr)
  end
  print(to_sexp(result))
end

main(60000)
