-- work.lua - a deterministic Lua workload for the robustness corpus:
-- tables, strings, closures, coroutines and the garbage collector.
local t = {}
for i = 1, 200000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
print("sorted", t[1], t[1000], t[#t])

local parts = {}
for i = 1, 20000 do parts[#parts + 1] = string.format("%05d", i * 3) end
local s = table.concat(parts, ",")
print("string", #s, s:sub(1, 17), select(2, s:gsub("0", "0")))

local function gen(n)
  return coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i * i) end
  end)
end
local acc = 0
for v in gen(50000) do acc = (acc + v) % 1000000007 end
print("coroutine", acc)

local objs = {}
for i = 1, 100000 do objs[i] = { id = i, name = "o" .. i } end
objs = nil
collectgarbage()
print("gc", collectgarbage("count") < 10000)
