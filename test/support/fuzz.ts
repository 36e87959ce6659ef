// Seeded randomness for the differential fuzz tests: a small PRNG (mulberry32), a fixed list of seeds
// (so every run checks the same cases) plus ALTTEXT_FUZZ_SEED when set (to re-run a failure, or try
// a new seed), and byte mutations of valid inputs. A failing case names its seed and number.

export type Random = {
  /** A float in [0, 1). */
  next(): number
  /** An integer in [0, n). */
  int(n: number): number
  /** An integer in [min, max]. */
  range(min: number, max: number): number
  chance(p: number): boolean
  pick<T>(items: readonly T[]): T
  bytes(n: number): Uint8Array
}

export function random(seed: number): Random {
  let state = seed >>> 0
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const int = (n: number) => Math.floor(next() * n)
  return {
    next,
    int,
    range: (min, max) => min + int(max - min + 1),
    chance: (p) => next() < p,
    pick: (items) => items[int(items.length)]!,
    bytes: (n) => {
      const out = new Uint8Array(n)
      for (let i = 0; i < n; i++) out[i] = int(256)
      return out
    },
  }
}

const FIXED_SEEDS = [1, 0x5eed, 20261206]

/** The seeds every fuzz test runs: the fixed ones, and ALTTEXT_FUZZ_SEED when it is set. */
export function fuzzSeeds(): number[] {
  const extra = Number(process.env.ALTTEXT_FUZZ_SEED)
  return process.env.ALTTEXT_FUZZ_SEED && Number.isInteger(extra) ? [...FIXED_SEEDS, extra] : FIXED_SEEDS
}

/**
 * Runs `check` on `cases` cases per seed, each with its own generator (so one case can be re-run from
 * its seed and number alone); a failure is rethrown naming them.
 */
export async function fuzzCases(cases: number, check: (random: Random, index: number) => void | Promise<void>): Promise<void> {
  for (const seed of fuzzSeeds()) {
    for (let index = 0; index < cases; index++) {
      try {
        await check(random(seed * 100_003 + index), index)
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error)
        throw new Error(`fuzz case failed (seed ${seed}, case ${index}; re-run with ALTTEXT_FUZZ_SEED=${seed}): ${message}`, { cause: error })
      }
    }
  }
}

/** `bytes` with one to `most` changes: bits flipped, bytes set, inserted, deleted or repeated, or cut short. */
export function mutate(r: Random, bytes: Uint8Array, most = 4): Uint8Array {
  let out: Uint8Array = Uint8Array.from(bytes)
  const changes = r.range(1, most)
  for (let n = 0; n < changes; n++) {
    const at = r.int(out.length + 1)
    switch (r.int(6)) {
      case 0:
        if (at < out.length) out[at]! ^= 1 << r.int(8)
        break
      case 1:
        if (at < out.length) out[at] = r.pick([0, 0xff, 0x7f, 0x80, r.int(256)])
        break
      case 2:
        out = concat(out.subarray(0, at), r.bytes(r.range(1, 4)), out.subarray(at))
        break
      case 3:
        out = concat(out.subarray(0, at), out.subarray(Math.min(out.length, at + r.range(1, 8))))
        break
      case 4: {
        const length = r.range(1, 16)
        out = concat(out.subarray(0, at), out.subarray(at, at + length), out.subarray(at))
        break
      }
      default:
        out = out.slice(0, at)
    }
  }
  return out
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** `bytes` cut into pieces at random places (some empty), as a stream may deliver them. */
export function randomChunks(r: Random, bytes: Uint8Array, most = 6): Uint8Array[] {
  const cuts = Array.from({ length: r.int(most) }, () => r.int(bytes.length + 1)).sort((a, b) => a - b)
  const pieces: Uint8Array[] = []
  let from = 0
  for (const cut of [...cuts, bytes.length]) {
    pieces.push(bytes.subarray(from, cut))
    from = cut
  }
  return pieces
}

/** An async iterable of `pieces`, as a request body's stream hands them over. */
export async function* streamOf(pieces: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) yield piece
}
