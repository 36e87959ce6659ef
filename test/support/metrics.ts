// Scrapes GET /metrics and reads it with a real Prometheus text-format parser (parse-prometheus-text-format),
// so a test checks what Prometheus would read, not the text. That parser (1.1.1) merges the series of a
// histogram that has labels into one, so the samples are read from a second parse in which histograms are
// declared untyped: each `_bucket`, `_sum` and `_count` line is then a sample of its own, with its labels.
import parsePrometheusTextFormat, { type PrometheusFamily, type PrometheusSample } from 'parse-prometheus-text-format'

export type Scrape = {
  status: number
  headers: Headers
  text: string
  /** Parsed families (histograms as the parser merges them: use `count` for their series); empty when the answer was not 200. */
  families: PrometheusFamily[]
  /** The value of the one sample of `name` whose labels include `labels`; 0 when there is none (a counter not yet counted). */
  value(name: string, labels?: Record<string, string>): number
  /** A histogram series' count (its `_count` sample), for the one series whose labels include `labels`; 0 when there is none. */
  count(name: string, labels?: Record<string, string>): number
  /** Every label value of every sample. */
  labelValues(): string[]
}

function matching(samples: PrometheusFamily[], name: string, labels: Record<string, string>): PrometheusSample | undefined {
  const found = samples
    .filter((f) => f.name === name)
    .flatMap((f) => f.metrics)
    .filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value))
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}; name more labels`)
  return found[0]
}

export async function scrape(baseUrl: string, headers: Record<string, string> = {}): Promise<Scrape> {
  const res = await fetch(`${baseUrl}/metrics`, { headers })
  const text = await res.text()
  const families = res.status === 200 ? parsePrometheusTextFormat(text) : []
  const samples = res.status === 200 ? parsePrometheusTextFormat(text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped')) : []
  return {
    status: res.status,
    headers: res.headers,
    text,
    families,
    value: (name, labels = {}) => Number(matching(samples, name, labels)?.value ?? 0),
    count: (name, labels = {}) => Number(matching(samples, `${name}_count`, labels)?.value ?? 0),
    labelValues: () => samples.flatMap((f) => f.metrics.flatMap((sample) => Object.values(sample.labels ?? {}))),
  }
}
