// For the bench's one-shot child clients (burst.ts, paired.ts): never outlive the orchestrator, never
// run past a hard limit. The orchestrator keeps our stdin open; EOF means it is gone.
export function boundLifetime(name: string, limitMs: number): void {
  setTimeout(() => {
    console.error(`${name}: ${limitMs / 1000} s limit reached`)
    process.exit(3)
  }, limitMs).unref()
  void (async () => {
    for await (const _ of Bun.stdin.stream()) {
      // nothing is sent; reading only detects EOF
    }
    process.exit(0)
  })()
}
