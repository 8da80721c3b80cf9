-- wrk script for the soak: each request is the next line of SOAK_PLAN ("token path"), in turn,
-- and one JSON line of results at the end (as bench/report.lua writes).
local plan = {}
for line in io.lines(os.getenv("SOAK_PLAN")) do
  local token, path = line:match("^(%S+)%s+(%S+)$")
  plan[#plan + 1] = {token = token, path = path}
end
local turn = 0

request = function()
  turn = turn % #plan + 1
  local step = plan[turn]
  return wrk.format("GET", step.path, {["Authorization"] = "Bearer " .. step.token})
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
