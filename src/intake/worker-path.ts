// Finds a worker entry file, from source and inside a `bun build --compile` binary.
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** Each worker entry file and the folder of src/ it sits in. */
const WORKER_FOLDERS = { 'gif-worker': 'intake', 'fetch-worker': 'intake', 'ocr-worker': 'ocr' } as const
type WorkerName = keyof typeof WORKER_FOLDERS

// From source (bun run, bun test) the worker file sits in its folder of src/. In a compiled binary every
// module is bundled into one file at /$bunfs/root/<binary>, and each extra entrypoint is embedded at
// its path relative to the entrypoints' common folder: `bun build src/main.ts src/intake/x-worker.ts`
// puts it at intake/x-worker.js.
export function workerPath(name: WorkerName): string {
  const folder = WORKER_FOLDERS[name]
  const candidates = [`../${folder}/${name}.ts`, `./${folder}/${name}.js`, `./${name}.js`, `./src/${folder}/${name}.js`].map(
    (path) => new URL(path, import.meta.url),
  )
  for (const candidate of candidates) {
    const path = fileURLToPath(candidate)
    if (existsSync(path)) return path
  }
  throw new Error(`the ${name} is missing from this build: add src/${folder}/${name}.ts as an entrypoint of \`bun build --compile\``)
}

/** Which worker entrypoints this build has (a compiled binary needs each as an extra entrypoint). */
export function missingWorkers(): string[] {
  const missing: string[] = []
  for (const name of Object.keys(WORKER_FOLDERS) as WorkerName[]) {
    try {
      workerPath(name)
    } catch {
      missing.push(name)
    }
  }
  return missing
}
