-- wrk script: POST /api/alt-text for one image URL with a distinct `context` per request
-- ("<BENCH_PREFIX>-<n>", n = 1, 2, ...), so every request has its own cache key. With BENCH_CYCLE=N
-- the contexts repeat 1..N (to replay the first N requests of an earlier run as cache hits). Counts
-- cache hits (`"cached":true`), misses and non-200 answers. Use one thread (-t1): wrk calls
-- request() once more in thread 0 to check the script and throws that request away, which is why
-- the numbering is arranged so that this call does not shift the contexts actually sent.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  counter = 0
  answered = 0
  hits = 0
  misses = 0
  bad = 0
  image_url = os.getenv("BENCH_IMAGE_URL")
  prefix = os.getenv("BENCH_PREFIX")
  cycle = tonumber(os.getenv("BENCH_CYCLE") or "0") or 0
  headers = { ["Content-Type"] = "application/json", ["X-API-Key"] = os.getenv("BENCH_KEY") }
end

function request()
  -- The discarded check call gets 0 (or N), the requests sent get 1, 2, ... (or 1..N, 1..N, ...).
  local i = counter
  if cycle > 0 then i = ((counter - 1) % cycle) + 1 end
  counter = counter + 1
  local body = string.format('{"image_url":"%s","context":"%s-%d"}', image_url, prefix, i)
  return wrk.format("POST", "/api/alt-text", headers, body)
end

function response(status, headers, body)
  answered = answered + 1
  if status ~= 200 then
    bad = bad + 1
  elseif string.find(body, '"cached":true', 1, true) then
    hits = hits + 1
  else
    misses = misses + 1
  end
end

function done(summary, latency, requests)
  local h, m, b = 0, 0, 0
  for _, thread in ipairs(threads) do
    h = h + (thread:get("hits") or 0)
    m = m + (thread:get("misses") or 0)
    b = b + (thread:get("bad") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,' ..
    '"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%.1f,"hits":%d,"misses":%d,"bad":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean, h, m, b))
end
