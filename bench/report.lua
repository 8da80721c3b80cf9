-- wrk script of the benchmark and the soak; one JSON line of results at the end.
-- With BENCH_TOKEN: that token on every request to the URL given to wrk.
-- With SOAK_PLAN: each request is the next line of that file ("token path"), in turn.
local plan = {}
local turn = 0

if os.getenv("SOAK_PLAN") then
  for line in io.lines(os.getenv("SOAK_PLAN")) do
    local token, path = line:match("^(%S+)%s+(%S+)$")
    plan[#plan + 1] = {token = token, path = path}
  end
  request = function()
    turn = turn % #plan + 1
    local step = plan[turn]
    return wrk.format("GET", step.path, {["Authorization"] = "Bearer " .. step.token})
  end
else
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_TOKEN")
  -- With BENCH_BODY: a POST of that body, as an MCP client sends a tool call.
  if os.getenv("BENCH_BODY") then
    wrk.method = "POST"
    wrk.body = os.getenv("BENCH_BODY")
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["Accept"] = "application/json, text/event-stream"
    wrk.headers["MCP-Protocol-Version"] = "2025-11-25"
  end
end

done = function(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
    '{"requests": %d, "duration_us": %d, "socket_errors": %d, "non_2xx": %d, '
      .. '"p50_us": %d, "p99_us": %d}\n',
    summary.requests, summary.duration,
    errors.connect + errors.read + errors.write + errors.timeout, errors.status,
    latency:percentile(50), latency:percentile(99)))
end
