// Worker entry: performs one HTTPS hop to addresses the main thread has already resolved and checked,
// so TLS, HTTP parsing, copying and hashing of up to 10 MB per image happen off the event loop that
// serves every other request. It decides nothing about which hosts are allowed.
//
// A `bun build --compile` binary must list this file as an extra entrypoint.
import { ApiError } from '../shared/errors.ts'
import { HashTurns, requestOnce, type CheckedAddress, type HopLimits, type HopOutcome } from './hop.ts'

/**
 * A CA list is a few hundred kB of PEM (the system roots plus the operator's CA): it is posted to a
 * worker once, with the first hop that needs it; `customCa` says whether a hop uses it.
 */
export type WorkerHopLimits = Omit<HopLimits, 'ca'> & { customCa: boolean }

export type FetchWorkerRequest =
  | { type: 'hop'; id: number; url: string; addresses: CheckedAddress[]; limits: WorkerHopLimits; ca?: string[] }
  | { type: 'abort'; id: number }

export type FetchWorkerReply =
  | { id: number; ok: true; outcome: HopOutcome }
  | { id: number; ok: false; refusal: boolean; message: string; detail: string | undefined }

declare var self: Worker

const running = new Map<number, AbortController>()
const turns = new HashTurns()
let caList: string[] | undefined

self.onmessage = async (event: MessageEvent<FetchWorkerRequest>) => {
  const message = event.data
  if (message.type === 'abort') {
    running.get(message.id)?.abort()
    return
  }
  const controller = new AbortController()
  running.set(message.id, controller)
  const { customCa, ...limits } = message.limits
  let received = 0
  if (message.ca !== undefined) caList = message.ca
  try {
    if (customCa && caList === undefined) throw new Error('the CA list was never posted to this worker')
    const outcome = await requestOnce(new URL(message.url), message.addresses, { ...limits, ca: customCa ? caList : undefined }, controller.signal, turns)
    const reply: FetchWorkerReply = { id: message.id, ok: true, outcome }
    if (outcome.kind === 'body') {
      received = outcome.bytes.length
      self.postMessage(reply, [outcome.bytes.buffer as ArrayBuffer])
    } else self.postMessage(reply)
  } catch (error) {
    const reply: FetchWorkerReply = {
      id: message.id,
      ok: false,
      refusal: error instanceof ApiError,
      message: error instanceof Error ? error.message : String(error),
      detail: error instanceof ApiError ? error.detail : undefined,
    }
    self.postMessage(reply)
  } finally {
    running.delete(message.id)
    collectSoon(received)
  }
}

// A hop leaves its response's buffers behind until this worker's heap is collected, which on its own
// schedule may be hundreds of megabytes later. Collecting after every hop slows back-to-back downloads
// (the collector competes for the cores), so it runs once per GC_EVERY_BYTES received, which still
// bounds what a burst of large images leaves behind, and when the worker idles.
const GC_EVERY_BYTES = 8 * 1024 * 1024
const GC_WHEN_IDLE_MS = 250
let receivedSinceGc = 0
let idleGc: ReturnType<typeof setTimeout> | null = null

function collectSoon(received: number): void {
  receivedSinceGc += received
  if (idleGc !== null) clearTimeout(idleGc)
  idleGc = null
  if (receivedSinceGc >= GC_EVERY_BYTES) {
    collectNow()
    return
  }
  if (running.size === 0) {
    idleGc = setTimeout(collectNow, GC_WHEN_IDLE_MS)
    idleGc.unref()
  }
}

function collectNow(): void {
  if (idleGc !== null) clearTimeout(idleGc)
  idleGc = null
  receivedSinceGc = 0
  Bun.gc(false)
}
