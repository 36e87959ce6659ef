-- wrk script: one fixed request (method, body and API key from the environment), repeated.
-- BENCH_METHOD (GET), BENCH_BODY (none), BENCH_KEY (none). Prints one BENCH_JSON line at the end.
function init(args)
  local method = os.getenv("BENCH_METHOD") or "GET"
  local body = os.getenv("BENCH_BODY")
  if body == "" then body = nil end
  local headers = {}
  local key = os.getenv("BENCH_KEY")
  if key and key ~= "" then headers["X-API-Key"] = key end
  if body then headers["Content-Type"] = "application/json" end
  req = wrk.format(method, nil, headers, body)
end

function request()
  return req
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f,"hits":0,"misses":0,"bad":0}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))
end
