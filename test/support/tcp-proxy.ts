// A TCP proxy on loopback, for tests that take a server away and bring it back without stopping it: `cut`
// closes every connection through it and stops listening (new connections are refused), `restore` listens
// again on the same port; `delay` holds every chunk that long in each direction (a slow server), in order.
// Only ever forwards to a loopback port.
import type { Socket } from 'bun'

export type TcpProxy = {
  port: number
  cut(): void
  restore(): void
  /** Holds each chunk `ms` before forwarding it, in both directions (0: at once). */
  delay(ms: number): void
  /** Connections accepted so far. */
  accepted(): number
  /** Sockets open now, client and upstream sides. */
  openConnections(): number
  stop(): void
}

type Side = { peer: Socket<Side> | null; pending: Uint8Array[]; closed: boolean; due?: number }

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
  let delayMs = 0
  let accepted = 0
  /** Forwards `data` to `to` now, or after the delay and after what `to` was sent before. */
  const forward = (to: Socket<Side>, data: Uint8Array) => {
    if (delayMs === 0 && to.data.due === undefined) return send(to, data)
    const due = Math.max(performance.now() + delayMs, to.data.due ?? 0)
    to.data.due = due
    setTimeout(() => {
      if (to.data.due === due) to.data.due = undefined
      if (!to.data.closed) send(to, data)
    }, due - performance.now())
  }
  const close = (socket: Socket<Side> | null) => {
    if (!socket || socket.data.closed) return
    socket.data.closed = true
    open.delete(socket)
    socket.end()
  }
  const listen = (port: number) =>
    Bun.listen<Side>({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(client) {
          accepted++
          client.data = { peer: null, pending: [], closed: false }
          open.add(client)
          // Until the upstream connection is open, what the client sends waits in its pending list.
          const early: Uint8Array[] = []
          client.data.pending = early
          Bun.connect<Side>({
            hostname: '127.0.0.1',
            port: targetPort,
            data: { peer: client, pending: [], closed: false },
            socket: {
              open(upstream) {
                open.add(upstream)
                if (client.data.closed) return close(upstream)
                client.data.peer = upstream
                client.data.pending = []
                for (const chunk of early) forward(upstream, chunk)
              },
              data(_upstream, chunk) {
                forward(client, new Uint8Array(chunk))
              },
              drain,
              close(upstream) {
                close(upstream)
                close(client)
              },
              error(upstream) {
                close(upstream)
                close(client)
              },
            },
          }).catch(() => close(client))
        },
        data(client, chunk) {
          const copy = new Uint8Array(chunk)
          if (client.data.peer) forward(client.data.peer, copy)
          else client.data.pending.push(copy)
        },
        drain(client) {
          if (client.data.peer) drain(client)
        },
        close(client) {
          close(client)
          close(client.data.peer)
        },
        error(client) {
          close(client)
          close(client.data.peer)
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
    },
    restore() {
      listener ??= listen(port)
    },
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
