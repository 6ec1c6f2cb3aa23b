-- SPDX-License-Identifier: Apache-2.0
-- PUZZLE (Gabriel; Forest Baskett's): the same program as puzzle.lisp. Vectors are Lua
-- tables indexed from 0 as in the original; the piece table P is a table of tables.
local SIZE, CLASSMAX, TYPEMAX, D = 511, 3, 12, 8

local function make_vec(n, init)
  local v = {}
  for i = 0, n - 1 do
    v[i] = init
  end
  return v
end

local piececount = make_vec(CLASSMAX + 1, 0)
local class = make_vec(TYPEMAX + 1, 0)
local piecemax = make_vec(TYPEMAX + 1, 0)
local puzzle = make_vec(SIZE + 1, false)
local p = {}
for i = 0, TYPEMAX do
  p[i] = make_vec(SIZE + 1, false)
end
local iii, kount = 0, 0

local function fit(i, j)
  local piece = p[i]
  for k = 0, piecemax[i] do
    if piece[k] then
      if puzzle[j + k] then
        return false
      end
    end
  end
  return true
end

local function place(i, j)
  local piece = p[i]
  for k = 0, piecemax[i] do
    if piece[k] then
      puzzle[j + k] = true
    end
  end
  piececount[class[i]] = piececount[class[i]] - 1
  for k = j, SIZE do
    if not puzzle[k] then
      return k
    end
  end
  return 0
end

local function puzzle_remove(i, j)
  local piece = p[i]
  for k = 0, piecemax[i] do
    if piece[k] then
      puzzle[j + k] = false
    end
  end
  piececount[class[i]] = piececount[class[i]] + 1
end

local function trial(j)
  local k = 0
  for i = 0, TYPEMAX do
    if piececount[class[i]] ~= 0 then
      if fit(i, j) then
        k = place(i, j)
        if trial(k) or k == 0 then
          kount = kount + 1
          return true
        else
          puzzle_remove(i, j)
        end
      end
    end
  end
  kount = kount + 1
  return false
end

local function definepiece(iclass, ii, jj, kk)
  local index = 0
  for i = 0, ii do
    for j = 0, jj do
      for k = 0, kk do
        index = i + D * (j + D * k)
        p[iii][index] = true
      end
    end
  end
  class[iii] = iclass
  piecemax[iii] = index
  if iii ~= TYPEMAX then
    iii = iii + 1
  end
end

local function start()
  for m = 0, SIZE do
    puzzle[m] = true
  end
  for i = 1, 5 do
    for j = 1, 5 do
      for k = 1, 5 do
        puzzle[i + D * (j + D * k)] = false
      end
    end
  end
  for i = 0, TYPEMAX do
    for m = 0, SIZE do
      p[i][m] = false
    end
  end
  iii = 0
  definepiece(0, 3, 1, 0); definepiece(0, 1, 0, 3); definepiece(0, 0, 3, 1)
  definepiece(0, 1, 3, 0); definepiece(0, 3, 0, 1); definepiece(0, 0, 1, 3)
  definepiece(1, 2, 0, 0); definepiece(1, 0, 2, 0); definepiece(1, 0, 0, 2)
  definepiece(2, 1, 1, 0); definepiece(2, 1, 0, 1); definepiece(2, 0, 1, 1)
  definepiece(3, 1, 1, 1)
  piececount[0] = 13
  piececount[1] = 3
  piececount[2] = 1
  piececount[3] = 1
  local m = 1 + D * (1 + D)
  local n = 0
  kount = 0
  if fit(0, m) then
    n = place(0, m)
  else
    error("puzzle: first piece does not fit")
  end
  if trial(n) then
    return kount
  end
  error("puzzle: failure")
end

local function main(iterations)
  local sum = 0
  for _ = 1, iterations do
    sum = sum + start()
  end
  print(sum)
end

main(5)
