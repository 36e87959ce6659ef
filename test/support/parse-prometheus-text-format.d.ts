// The parser ships no types; this is the shape its README documents (prom2json's).
declare module 'parse-prometheus-text-format' {
  export type PrometheusSample = {
    labels?: Record<string, string>
    /** Counters, gauges, untyped. */
    value?: string
    /** Histograms: upper bound → cumulative count. */
    buckets?: Record<string, string>
    count?: string
    sum?: string
  }
  export type PrometheusFamily = { name: string; help: string; type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'; metrics: PrometheusSample[] }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[]
}
