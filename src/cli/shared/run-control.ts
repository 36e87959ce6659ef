// How a client command's run stops: the first Ctrl-C (or SIGTERM) starts nothing new and lets the
// requests in flight finish and be written; a second aborts them. A failure that no later image can
// escape (no credit, a refused key) stops the run the same way.
import type { Interrupts } from './io'

export type RunControl = {
  /** Aborts the requests in flight: the second Ctrl-C. */
  readonly signal: AbortSignal
  /** Why the run stops starting new images ('interrupted', or a stop reason); undefined while it goes on. */
  readonly stopping: string | undefined
  readonly interrupted: boolean
  /** Stops starting new images for `reason`; true when this is the first reason given. */
  stop(reason: string): boolean
  /** Removes the signal handlers (in the command's finally). */
  dispose(): void
}

/** `onInterrupt` hears the first Ctrl-C (to tell the user what happens now). */
export function createRunControl(interrupts: Interrupts, onInterrupt: () => void): RunControl {
  const controller = new AbortController()
  let stopping: string | undefined
  let interrupted = false
  const onSignal = () => {
    if (interrupted) {
      controller.abort()
      return
    }
    interrupted = true
    stopping ??= 'interrupted'
    onInterrupt()
  }
  const unlisten = interrupts.listen(onSignal)
  return {
    signal: controller.signal,
    get stopping() {
      return stopping
    },
    get interrupted() {
      return interrupted
    },
    stop(reason) {
      if (stopping !== undefined) return false
      stopping = reason
      return true
    },
    dispose() {
      unlisten()
    },
  }
}
