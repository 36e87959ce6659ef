// A counting semaphore whose waiters leave when their signal aborts: bounds memory-heavy work.
export class Slots {
  private free: number
  private readonly waiting: Array<() => void> = []
  constructor(count: number) {
    this.free = count
  }
  async acquire(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted()
    if (this.free > 0) {
      this.free--
      return
    }
    await new Promise<void>((resolve, reject) => {
      const grant = (): void => {
        signal?.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = (): void => {
        const index = this.waiting.indexOf(grant)
        if (index !== -1) this.waiting.splice(index, 1)
        reject(signal?.reason)
      }
      this.waiting.push(grant)
      signal?.addEventListener('abort', onAbort, { once: true })
    })
  }
  release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.free++
  }
}
