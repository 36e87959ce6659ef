// Capacity shared by intake work: decode slots, the budget of decoded bytes, GIF workers, and each
// owner's share. Waiters are served in order (a large request is never overtaken for ever by small
// ones), leave the line when their request's signal aborts, and are refused when the intake closes.
import type { IntakeOwner } from './types.ts'

type Waiter = { amount: number; grant: () => void; fail: (error: Error) => void }

export type Release = () => void

export class Capacity {
  private used = 0
  private readonly waiters: Waiter[] = []
  private closedWith: Error | null = null

  /** `onChange` hears of every change to what is held or waiting. */
  constructor(
    readonly total: number,
    private readonly onChange?: () => void,
  ) {}

  get inUse(): number {
    return this.used
  }

  get waiting(): number {
    return this.waiters.length
  }

  get idle(): boolean {
    return this.used === 0 && this.waiters.length === 0
  }

  /**
   * Takes `amount` (at most `total`), waiting behind earlier requests; rejects with `waitFailed()` when
   * `signal` aborts before it is granted. The returned release may be called more than once.
   */
  acquire(amount: number, signal: AbortSignal | undefined, waitFailed: () => Error): Promise<Release> {
    if (this.closedWith !== null) return Promise.reject(this.closedWith)
    if (!(amount >= 0 && amount <= this.total)) return Promise.reject(new RangeError(`${amount} is more than the whole capacity of ${this.total}`))
    if (signal?.aborted) return Promise.reject(waitFailed())
    if (this.waiters.length === 0 && this.used + amount <= this.total) return Promise.resolve(this.take(amount))
    return new Promise<Release>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter)
        if (index === -1) return
        this.waiters.splice(index, 1)
        reject(waitFailed())
        // The one that left may have been holding up smaller requests behind it.
        this.grantWaiting()
        this.onChange?.()
      }
      const waiter: Waiter = {
        amount,
        grant: () => {
          signal?.removeEventListener('abort', onAbort)
          resolve(this.take(amount))
        },
        fail: (error) => {
          signal?.removeEventListener('abort', onAbort)
          reject(error)
        },
      }
      this.waiters.push(waiter)
      signal?.addEventListener('abort', onAbort, { once: true })
      this.onChange?.()
    })
  }

  /**
   * Takes `amount` (at most `total`) only when it is free now and nobody waits for it (so no waiter is
   * overtaken); null otherwise. Throws what close() was given once closed.
   */
  tryAcquire(amount: number): Release | null {
    if (this.closedWith !== null) throw this.closedWith
    if (!(amount >= 0 && amount <= this.total)) throw new RangeError(`${amount} is more than the whole capacity of ${this.total}`)
    return this.waiters.length === 0 && this.used + amount <= this.total ? this.take(amount) : null
  }

  /** Refuses every waiter and every later request with `error`; what is held is still released as usual. */
  close(error: Error): void {
    this.closedWith ??= error
    for (const waiter of this.waiters.splice(0)) waiter.fail(error)
    this.onChange?.()
  }

  private take(amount: number): Release {
    this.used += amount
    this.onChange?.()
    let released = false
    return () => {
      if (released) return
      released = true
      this.used -= amount
      this.grantWaiting()
      this.onChange?.()
    }
  }

  private grantWaiting(): void {
    while (this.waiters.length > 0 && this.used + this.waiters[0]!.amount <= this.total) this.waiters.shift()!.grant()
  }
}

/** At most `perOwner` pieces of intake work in flight per owner; work without an owner is not counted. */
export class OwnerCaps {
  private readonly owners = new Map<IntakeOwner, Capacity>()
  private closedWith: Error | null = null

  constructor(
    readonly perOwner: number,
    private readonly onChange?: () => void,
  ) {}

  get waiting(): number {
    let waiting = 0
    for (const capacity of this.owners.values()) waiting += capacity.waiting
    return waiting
  }

  async acquire(owner: IntakeOwner | undefined, signal: AbortSignal | undefined, waitFailed: () => Error): Promise<Release> {
    if (this.closedWith !== null) throw this.closedWith
    if (owner === undefined) return () => {}
    let capacity = this.owners.get(owner)
    if (capacity === undefined) {
      capacity = new Capacity(this.perOwner, this.onChange)
      this.owners.set(owner, capacity)
    }
    // An owner with nothing in flight is forgotten, so the map holds only the busy ones.
    const forgetIfIdle = (): void => {
      if (capacity.idle && this.owners.get(owner) === capacity) this.owners.delete(owner)
    }
    let release: Release
    try {
      release = await capacity.acquire(1, signal, waitFailed)
    } catch (error) {
      forgetIfIdle()
      throw error
    }
    return () => {
      release()
      forgetIfIdle()
    }
  }

  close(error: Error): void {
    this.closedWith ??= error
    for (const capacity of this.owners.values()) capacity.close(error)
  }
}
