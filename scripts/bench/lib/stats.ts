// Small statistics helpers: percentiles of samples, and the median-with-spread of rounds.

/** Percentile by linear interpolation between closest ranks (p in 0..100). NaN for no samples. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN
  const sorted = [...samples].sort((a, b) => a - b)
  const rank = (p / 100) * (sorted.length - 1)
  const low = Math.floor(rank)
  const high = Math.ceil(rank)
  const a = sorted[low]!
  const b = sorted[high]!
  return a + (b - a) * (rank - low)
}

export const median = (samples: readonly number[]): number => percentile(samples, 50)

/** A figure over several rounds: the median of the per-round values and their range. */
export type Figure = { median: number; min: number; max: number; rounds: number[] }

export function figure(rounds: readonly number[]): Figure {
  const finite = rounds.filter((v) => Number.isFinite(v))
  return {
    median: median(finite),
    min: finite.length ? Math.min(...finite) : Number.NaN,
    max: finite.length ? Math.max(...finite) : Number.NaN,
    rounds: [...rounds],
  }
}

/** Per-round ratios a/b, then their figure (so the ratio is from the same round, not medians of each). */
export function ratioFigure(numerators: readonly number[], denominators: readonly number[]): Figure {
  return figure(numerators.map((n, i) => n / (denominators[i] ?? Number.NaN)))
}

/** One percentile of each round's timed samples, as a figure across the rounds. */
export function roundsPercentile<R>(rounds: readonly R[], pick: (round: R) => readonly { ms: number }[], q: number): Figure {
  return figure(
    rounds.map((round) =>
      percentile(
        pick(round).map((sample) => sample.ms),
        q,
      ),
    ),
  )
}
