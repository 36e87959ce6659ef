// A TCP proxy on loopback, for tests that take a server away and bring it back without stopping it: `cut`
// closes every connection through it and stops listening (new connections are refused), `restore` listens
// again on the same port. `blackHole` takes the network away silently instead, as a cable pulled or a
// firewall that drops packets would: the matched connections stay open at both ends, but nothing passes
// any more, in either direction, not even a close. `delay` holds every chunk that long in each direction
// (a slow server), in order. Only ever forwards to a loopback port.
import type { Socket } from 'bun'

export type TcpProxy = {
  port: number
  cut(): void
  restore(): void
  /**
   * From now on, stops forwarding on every connection, open or new, whose client has sent bytes for which
   * `match` holds (all of them without `match`; it sees what the client sent so far, as latin1 text, e.g.
   * `LISTEN`), without closing either end. Bytes dropped are lost: a matched connection stays dead.
   */
  blackHole(match?: (sent: string) => boolean): void
  /** New traffic passes again; connections already black-holed stay silent. */
  endBlackHole(): void
  /** How many connections are black-holed now. */
  blackHoled(): number
  /** Holds each chunk `ms` before forwarding it, in both directions (0: at once). */
  delay(ms: number): void
  /** Connections accepted so far. */
  accepted(): number
  /** Sockets open now, client and upstream sides. */
  openConnections(): number
  stop(): void
}

/** One client connection and its upstream one. */
type Link = { sent: string; holed: boolean }
type Side = { peer: Socket<Side> | null; pending: Uint8Array[]; closed: boolean; link: Link; due?: number }

/** What a black hole's match sees of a connection: its first bytes are enough to tell it apart. */
const SENT_KEPT = 64 * 1024

/** Writes what the socket takes now and keeps the rest for its drain. */
function send(socket: Socket<Side>, data: Uint8Array): void {
  if (socket.data.pending.length > 0) {
    socket.data.pending.push(data)
    return
  }
  const written = socket.write(data)
  if (written < data.byteLength) socket.data.pending.push(data.subarray(Math.max(0, written)))
}

function drain(socket: Socket<Side>): void {
  while (socket.data.pending.length > 0) {
    const next = socket.data.pending[0]!
    const written = socket.write(next)
    if (written < next.byteLength) {
      socket.data.pending[0] = next.subarray(Math.max(0, written))
      return
    }
    socket.data.pending.shift()
  }
}

export function startTcpProxy(targetPort: number): TcpProxy {
  const open = new Set<Socket<Side>>()
  const links = new Set<Link>()
  let hole: ((sent: string) => boolean) | null = null
  /** Whether the link is (now) black-holed: once it is, it stays so. */
  const holed = (link: Link) => {
    if (!link.holed && hole?.(link.sent)) link.holed = true
    return link.holed
  }
  let delayMs = 0
  let accepted = 0
  /** Forwards `data` to `to` now, or after the delay and after what `to` was sent before. */
  const forward = (to: Socket<Side>, data: Uint8Array) => {
    if (delayMs === 0 && to.data.due === undefined) return send(to, data)
    const due = Math.max(performance.now() + delayMs, to.data.due ?? 0)
    to.data.due = due
    setTimeout(() => {
      if (to.data.due === due) to.data.due = undefined
      if (!to.data.closed && !to.data.link.holed) send(to, data)
    }, due - performance.now())
  }
  const close = (socket: Socket<Side> | null) => {
    if (!socket || socket.data.closed) return
    socket.data.closed = true
    open.delete(socket)
    socket.end()
  }
  /** A close seen on one side reaches the other only while the link is not black-holed. */
  const closeBoth = (socket: Socket<Side>, peer: Socket<Side> | null) => {
    if (socket.data.link.holed) {
      socket.data.closed = true
      open.delete(socket)
      if (peer === null || peer.data.closed) links.delete(socket.data.link)
      return
    }
    links.delete(socket.data.link)
    close(socket)
    close(peer)
  }
  const listen = (port: number) =>
    Bun.listen<Side>({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(client) {
          accepted++
          const link: Link = { sent: '', holed: false }
          links.add(link)
          client.data = { peer: null, pending: [], closed: false, link }
          open.add(client)
          // Until the upstream connection is open, what the client sends waits in its pending list.
          const early: Uint8Array[] = []
          client.data.pending = early
          Bun.connect<Side>({
            hostname: '127.0.0.1',
            port: targetPort,
            data: { peer: client, pending: [], closed: false, link },
            socket: {
              open(upstream) {
                open.add(upstream)
                if (client.data.closed) return close(upstream)
                client.data.peer = upstream
                client.data.pending = []
                if (!holed(link)) for (const chunk of early) forward(upstream, chunk)
              },
              data(_upstream, chunk) {
                if (!holed(link)) forward(client, new Uint8Array(chunk))
              },
              drain,
              close(upstream) {
                closeBoth(upstream, client)
              },
              error(upstream) {
                closeBoth(upstream, client)
              },
            },
          }).catch(() => close(client))
        },
        data(client, chunk) {
          const copy = new Uint8Array(chunk)
          const { link } = client.data
          if (link.sent.length < SENT_KEPT)
            link.sent += Buffer.from(copy)
              .toString('latin1')
              .slice(0, SENT_KEPT - link.sent.length)
          if (holed(link)) return
          if (client.data.peer) forward(client.data.peer, copy)
          else client.data.pending.push(copy)
        },
        drain(client) {
          if (client.data.peer) drain(client)
        },
        close(client) {
          closeBoth(client, client.data.peer)
        },
        error(client) {
          closeBoth(client, client.data.peer)
        },
      },
    })
  let listener: ReturnType<typeof listen> | null = listen(0)
  const port = listener.port
  return {
    port,
    cut() {
      listener?.stop(true)
      listener = null
      for (const socket of [...open]) close(socket)
      links.clear()
    },
    restore() {
      hole = null
      listener ??= listen(port)
    },
    blackHole(match = () => true) {
      hole = match
      for (const link of links) holed(link)
    },
    endBlackHole() {
      hole = null
    },
    blackHoled: () => [...links].filter((link) => link.holed).length,
    delay(ms) {
      delayMs = ms
    },
    accepted: () => accepted,
    openConnections: () => open.size,
    stop() {
      this.cut()
    },
  }
}
