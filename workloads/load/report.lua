-- wrk calls done once, in its main thread, after its text report. It prints
-- wrk's own figures as one JSON line, so that patchproof reads exact
-- integers (microseconds, bytes, counts) instead of the report's rounded,
-- unit-scaled text.

-- wrk pushes its uint64 counters as Lua numbers: exact below 2^53.
local function int(x)
  return string.format("%d", x)
end

-- mean and stdev are wrk's long doubles; JSON has no NaN or infinity.
local function real(x)
  if x ~= x or x == math.huge or x == -math.huge then
    return "null"
  end
  return string.format("%.17g", x)
end

function done(summary, latency, requests)
  local e = summary.errors
  -- An empty histogram's min is UINT64_MAX; wrk reports its mean as 0.
  local min = 0
  if #latency > 0 then
    min = latency.min
  end
  local ps = {}
  for i, p in ipairs({50, 75, 90, 99, 99.9}) do
    ps[i] = string.format('{"p":%s,"us":%s}', tostring(p), int(latency:percentile(p)))
  end
  io.write(string.format(
    '{"requests":%s,"duration_us":%s,"bytes":%s,' ..
    '"errors":{"connect":%s,"read":%s,"write":%s,"status":%s,"timeout":%s},' ..
    '"latency_us":{"min":%s,"max":%s,"mean":%s,"stdev":%s,"percentiles":[%s]}}\n',
    int(summary.requests), int(summary.duration), int(summary.bytes),
    int(e.connect), int(e.read), int(e.write), int(e.status), int(e.timeout),
    int(min), int(latency.max), real(latency.mean), real(latency.stdev),
    table.concat(ps, ",")))
end
