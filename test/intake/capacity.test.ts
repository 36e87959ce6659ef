// The queues in front of intake work, as plain objects: order, leaving on abort, closing.
import { describe, expect, test } from 'bun:test'
import { Capacity, OwnerCaps } from '../../src/intake/capacity.ts'

const waitFailed = () => new Error('waited too long')
const closed = new Error('closed')

describe('Capacity', () => {
  test('grants in order: a large request at the head is not overtaken by smaller ones', async () => {
    const capacity = new Capacity(10)
    const granted: string[] = []
    const noting = (name: string) => (release: () => void) => {
      granted.push(name)
      return release
    }
    const first = await capacity.acquire(6, undefined, waitFailed)
    const large = capacity.acquire(8, undefined, waitFailed).then(noting('large'))
    // 2 more would fit beside the first, but the large request came before.
    const small = capacity.acquire(2, undefined, waitFailed).then(noting('small'))
    await new Promise((resolve) => setImmediate(resolve))
    expect(granted).toEqual([])
    expect(capacity.waiting).toBe(2)
    first()
    const releases = await Promise.all([large, small])
    expect(granted).toEqual(['large', 'small'])
    for (const release of releases) release()
    expect(capacity.idle).toBe(true)
  })

  test('a waiter whose signal aborts leaves with its own error, and those behind it move up', async () => {
    const capacity = new Capacity(10)
    const holder = await capacity.acquire(5, undefined, waitFailed)
    const controller = new AbortController()
    const blocked = capacity.acquire(10, controller.signal, waitFailed)
    const behind = capacity.acquire(5, undefined, waitFailed)
    controller.abort()
    await expect(blocked).rejects.toThrow('waited too long')
    ;(await behind)()
    holder()
    expect(capacity.inUse).toBe(0)
    await expect(capacity.acquire(1, AbortSignal.abort(), waitFailed)).rejects.toThrow('waited too long')
  })

  test('a release counts once, however often it is called', async () => {
    const capacity = new Capacity(2)
    const release = await capacity.acquire(2, undefined, waitFailed)
    release()
    release()
    expect(capacity.inUse).toBe(0)
    ;(await capacity.acquire(2, undefined, waitFailed))()
  })

  test('more than the whole is refused rather than queued for ever', async () => {
    await expect(new Capacity(2).acquire(3, undefined, waitFailed)).rejects.toThrow(RangeError)
  })

  test('closing refuses the waiters and every later request; what is held is released as usual', async () => {
    const capacity = new Capacity(1)
    const held = await capacity.acquire(1, undefined, waitFailed)
    const waiting = capacity.acquire(1, undefined, waitFailed)
    capacity.close(closed)
    await expect(waiting).rejects.toBe(closed)
    await expect(capacity.acquire(1, undefined, waitFailed)).rejects.toBe(closed)
    held()
    expect(capacity.inUse).toBe(0)
  })

  test('onChange hears of every grant, wait and release', async () => {
    const seen: Array<[number, number]> = []
    const capacity: Capacity = new Capacity(1, () => {
      const last = seen.at(-1)
      if (last?.[0] !== capacity.inUse || last[1] !== capacity.waiting) seen.push([capacity.inUse, capacity.waiting])
    })
    const held = await capacity.acquire(1, undefined, waitFailed)
    const next = capacity.acquire(1, undefined, waitFailed)
    held()
    ;(await next)()
    expect(seen).toEqual([
      [1, 0],
      [1, 1],
      [1, 0],
      [0, 0],
    ])
  })
})

describe('OwnerCaps', () => {
  test('each owner has its own share; work without an owner is not counted; idle owners are forgotten', async () => {
    const caps = new OwnerCaps(1)
    const a = await caps.acquire(1, undefined, waitFailed)
    const b = await caps.acquire(2, undefined, waitFailed)
    const unowned = await caps.acquire(undefined, undefined, waitFailed)
    const secondOfA = caps.acquire(1, undefined, waitFailed)
    expect(caps.waiting).toBe(1)
    a()
    ;(await secondOfA)()
    b()
    unowned()
    expect(caps.waiting).toBe(0)
    expect((caps as unknown as { owners: Map<number, unknown> }).owners.size).toBe(0)
  })

  test('a wait that is given up leaves no owner behind; closing refuses waiters', async () => {
    const caps = new OwnerCaps(1)
    const held = await caps.acquire(1, undefined, waitFailed)
    const controller = new AbortController()
    const given = caps.acquire(1, controller.signal, waitFailed)
    controller.abort()
    await expect(given).rejects.toThrow('waited too long')
    const waiting = caps.acquire(1, undefined, waitFailed)
    caps.close(closed)
    await expect(waiting).rejects.toBe(closed)
    await expect(caps.acquire(2, undefined, waitFailed)).rejects.toBe(closed)
    held()
  })
})
