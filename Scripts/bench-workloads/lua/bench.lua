-- The real-program workload of Scripts/bench: Lua itself (built by its own makefile) running a
-- mix of table sorts, string work and protected calls, the kind of code a Lua program spends its
-- time in. `lua bench.lua [SCALE]`: SCALE 1 (the default) runs ~100-200 ms uninstrumented on a
-- 2-core VM. Prints one checksum line; the same line whatever the build or tracer.

local scale = tonumber(arg and arg[1]) or 1
local rounds = math.max(1, math.floor(30 * scale))

-- A small deterministic generator: math.random's sequence differs between Lua versions.
local seed = 12345
local function rand(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end

local function sort_work()
  local t = {}
  for i = 1, 6000 do t[i] = rand(100000) end
  table.sort(t)
  local words = {}
  for i = 1, 1500 do words[i] = string.format("w%05d", rand(50000)) end
  table.sort(words, function(a, b) return a > b end)
  return t[1] + t[#t] + #words[1]
end

local function string_work()
  local parts = {}
  for i = 1, 1500 do
    local s = string.rep(string.char(97 + i % 26), 1 + i % 7) .. tostring(i)
    parts[#parts + 1] = s:upper():gsub("A", "a")
  end
  local text = table.concat(parts, ",")
  local count = 0
  for word in text:gmatch("[^,]+") do
    if word:find("%d%d") then count = count + 1 end
  end
  return count + #text
end

local function risky(i)
  if i % 7 == 0 then error("bad " .. i) end
  return i * 2
end

local function pcall_work()
  local ok_sum, failures = 0, 0
  for i = 1, 6000 do
    local ok, value = pcall(risky, i)
    if ok then ok_sum = ok_sum + value else failures = failures + 1 end
  end
  return ok_sum + failures
end

local checksum = 0
for _ = 1, rounds do
  checksum = (checksum + sort_work() + string_work() + pcall_work()) % 1000000007
end
print("checksum " .. checksum)
