// What a command may touch of the world it runs in, handed to its `run`: the environment, the output
// streams, the folder, the clock, Ctrl-C and the CPU priority. Only src/main.ts passes the process's
// own; a test passes its own and runs the command in-process.
import { writeSync } from 'node:fs'
import type { Env } from '../../config'

/** Where a command writes: the process's stdout/stderr, or a test's capture. `isTTY`/`columns` say a terminal is there. */
export type Sink = { write(text: string): unknown; readonly isTTY?: boolean; readonly columns?: number }

/** Ctrl-C and SIGTERM: `listen` adds a listener and returns its removal. While any listener is on, a signal stops no process. */
export type Interrupts = { listen(listener: () => void): () => void }

/**
 * Appends to a file descriptor with write(2): nothing waits in a buffer when the process dies or exits.
 * A full pipe (stdout is non-blocking, its reader behind) is waited for, as a blocking write would.
 */
export function appender(fd: number): (text: string) => void {
  const pause = new Int32Array(new SharedArrayBuffer(4))
  return (text: string) => {
    const bytes = Buffer.from(text)
    let offset = 0
    while (offset < bytes.length) {
      try {
        offset += writeSync(fd, bytes, offset)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') throw error
        Atomics.wait(pause, 0, 0, 10)
      }
    }
  }
}

export type CommandIo = {
  env: Env
  stdout: Sink
  stderr: Sink
  /** The folder relative paths are read from (the process's working directory). */
  cwd: string
  /** Milliseconds since the epoch. */
  clock: () => number
  interrupts: Interrupts
  /** Lowers the process's CPU priority to `niceness` unless it is that low already (a test's leaves its own alone). */
  lowerPriority(niceness: number): void
}
