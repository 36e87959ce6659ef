// Child process for the benchmark's peers, each in its own process so that none shares an event loop
// with the service or the load generator:
//   bun fixtures.ts image-server <dir>       the HTTPS image server (test/support), serving every file of <dir>
//   bun fixtures.ts ollama <delayMs> [dir]    the fake Ollama (test/support), answering after delayMs; with
//                                            a dir, it writes there the image of each request whose page
//                                            context holds `bench-keep-<name>`, as <name>.img; with
//                                            BENCH_OLLAMA_ENDS=<file>, it appends there when each answer
//                                            is sent (ms since the epoch, one a line: scenario 19's batch);
//                                            a translation (no image) in the language its prompt names
// Prints one line `BENCH_READY {json}` when listening (loopback only). Exits when its stdin closes
// (the orchestrator is gone), on SIGTERM/SIGINT, or after BENCH_MAX_LIFETIME_MS (default 20 minutes).
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startFakeOllama } from '../../test/support/fake-ollama'
import { startHttpsImageServer } from '../../test/support/https-image-server'

const [mode, ...args] = process.argv.slice(2)
const stops: Array<() => Promise<void> | void> = []
let exiting = false

async function exit(code: number): Promise<never> {
  if (!exiting) {
    exiting = true
    const timer = setTimeout(() => process.exit(code), 3000)
    timer.unref()
    for (const stop of stops) await Promise.resolve(stop()).catch(() => undefined)
  }
  process.exit(code)
}

process.on('SIGTERM', () => void exit(0))
process.on('SIGINT', () => void exit(0))
setTimeout(() => void exit(3), Number(process.env.BENCH_MAX_LIFETIME_MS ?? 20 * 60_000)).unref()
void (async () => {
  // Parent gone (its end of the pipe closed): stop.
  for await (const _ of Bun.stdin.stream()) {
    // the orchestrator sends nothing; reading only detects EOF
  }
  await exit(0)
})()

function ready(info: Record<string, unknown>): void {
  console.log(`BENCH_READY ${JSON.stringify(info)}`)
}

switch (mode) {
  case 'image-server': {
    const dir = args[0]!
    const server = await startHttpsImageServer()
    stops.push(() => server.stop())
    for (const name of readdirSync(dir)) server.route(`/${name}`, { kind: 'bytes', body: new Uint8Array(readFileSync(join(dir, name))) })
    ready({ origin: server.origin, caPath: server.caPath, pid: process.pid })
    break
  }
  case 'ollama': {
    const delayMs = Number(args[0] ?? 0)
    const keepDir = args[1]
    const text = 'Coloured stripes and a gradient from red to green on a blue checkerboard.'
    // Scenario 21 asks for translations: answered in the language asked, so no language check sends them back.
    const translations: Record<string, string> = {
      German: 'Farbige Streifen und ein Verlauf von Rot nach Grün auf einem blauen Schachbrett.',
      French: 'Des rayures colorées et un dégradé du rouge au vert sur un damier bleu.',
    }
    const endsFile = process.env.BENCH_OLLAMA_ENDS
    const ollama = await startFakeOllama({
      delayMs,
      reply: (request) => {
        // Called once the delay is over (the service does not stream): the call's end.
        if (endsFile) appendFileSync(endsFile, `${Date.now()}\n`)
        const keep = keepDir && JSON.stringify(request.messages).match(/bench-keep-([a-z0-9-]+)/)
        if (keep && request.images[0]) writeFileSync(join(keepDir, `${keep[1]}.img`), request.images[0].bytes)
        const asked = request.images.length === 0 && JSON.stringify(request.messages).match(/Translate into (\w+)/)
        return (asked && translations[asked[1]!]) || text
      },
    })
    stops.push(() => ollama.stop())
    // The fake records every request with its decoded images: forget them often so memory stays flat.
    setInterval(() => ollama.reset(), 2000)
    ready({ url: ollama.url, pid: process.pid })
    break
  }
  default:
    console.error(`fixtures.ts: unknown mode ${mode}`)
    process.exit(2)
}
