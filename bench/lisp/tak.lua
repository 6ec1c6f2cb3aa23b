-- SPDX-License-Identifier: Apache-2.0
-- TAK (Gabriel): (tak 18 12 6) repeated; the same program as tak.lisp.
local function tak(x, y, z)
  if not (y < x) then
    return z
  end
  return tak(tak(x - 1, y, z), tak(y - 1, z, x), tak(z - 1, x, y))
end

local function main(iterations)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + tak(18, 12, 6)
  end
  print(sum)
end

main(300)
