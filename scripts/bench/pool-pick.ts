// Child process for scenario 16 (c): what the pool of model hosts costs a call in itself, in-process. The
// one place the bench loads a module of src/: the pool's choice of host takes microseconds, far below what
// an HTTP measurement on this machine can resolve, so it is timed here as well. `calls` times, in turns:
// pool.describe() over three instant in-process hosts, and the same host's describe() called bare.
//   BENCH_POOL_PICK='{"calls":20000}' bun pool-pick.ts        prints `BENCH_RESULT {"poolUs":[...],"bareUs":[...]}`
import { createModelPool } from '../../src/model-provider/pool'
import type { DescribeRequest, ModelProvider } from '../../src/model-provider/provider'
import { boundLifetime } from './lib/child'

const { calls = 20_000 } = JSON.parse(process.env.BENCH_POOL_PICK ?? '{}') as { calls?: number }
boundLifetime('pool-pick.ts', 60_000)

const instant = (name: string): ModelProvider => ({
  name,
  model: 'llava',
  health: async () => ({ ok: true, detail: 'in-process', publicDetail: 'in-process' }),
  describe: async () => ({ content: 'An answer.', structured: false }),
})
const hosts = ['a', 'b', 'c'].map((name) => ({ url: `http://${name}.invalid`, provider: instant(name) }))
const pool = createModelPool({ hosts, concurrency: 2 })
const request: DescribeRequest = {
  image: { data: new Uint8Array(16), mime: 'image/png' },
  system: 'system',
  prompt: 'prompt',
  maxTokens: 100,
  signal: new AbortController().signal,
}

const poolUs: number[] = []
const bareUs: number[] = []
const time = async (call: () => Promise<unknown>, into: number[]) => {
  const started = performance.now()
  await call()
  into.push((performance.now() - started) * 1000)
}
const bare = hosts[0]!.provider
for (let i = 0; i < calls; i++) {
  if (i % 2 === 0) {
    await time(() => pool.describe(request), poolUs)
    await time(() => bare.describe(request), bareUs)
  } else {
    await time(() => bare.describe(request), bareUs)
    await time(() => pool.describe(request), poolUs)
  }
}
pool.close()
// The first calls run before the JIT has compiled anything: leave a tenth out.
const skip = Math.floor(calls / 10)
console.log(`BENCH_RESULT ${JSON.stringify({ poolUs: poolUs.slice(skip), bareUs: bareUs.slice(skip) })}`)
process.exit(0)
