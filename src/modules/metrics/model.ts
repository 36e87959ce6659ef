// What /metrics reads and the label values it uses. Every label has a closed set of values (or the
// operator's own configuration: routes as the app defines them, model hosts as configured), so no
// client can mint series, and none carries an email, a key, a path or the URL of an image.
import type { StoreCounts } from '../../store/contract'
import type { GenerationQueue } from '../alt-text/queue'

/** A model host as the pool sees it: its configured origin, whether it takes calls, its calls in flight. */
export type ModelHostState = { url: string; healthy: boolean; inFlight: number }

/** The states /metrics reads at each scrape. */
export type MetricsSources = {
  queue: GenerationQueue['stats']
  /** Generation slots now (healthy hosts × per-host concurrency). */
  queueCapacity: () => number
  /** Absent when the model provider is not a pool (a test's own provider). */
  modelHosts?: () => ModelHostState[]
  counts: () => Promise<StoreCounts>
}

/** Where a generation came from: a single call waits with a deadline, a batch item as background work. */
export type GenerationKind = 'interactive' | 'batch'

/** HTTP methods kept as label values; anything else is counted as OTHER. */
export const METHOD_LABELS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'])

/** The route label of a request no route matched (a 404): never its path. */
export const UNMATCHED_ROUTE = 'unmatched'
