// Liveness and readiness. Readiness asks the database and the model server, each with a short timeout.
import type { ModelProvider } from '../../model-provider/provider'
import type { Store } from '../../store/types'
import { VERSION } from '../../version'

export type Check = { ok: boolean; detail: string }

export function createHealthService(store: Store, model: ModelProvider, timeoutMs = 2000) {
  return {
    liveness: () => ({ status: 'ok' as const, version: VERSION }),
    async readiness() {
      const database: Check = await store
        .probe()
        .then(() => ({ ok: true, detail: 'writable' }))
        .catch((error: unknown) => ({ ok: false, detail: `database error: ${error instanceof Error ? error.message : String(error)}` }))
      const modelCheck: Check = await model.health(AbortSignal.timeout(timeoutMs))
      return { ready: database.ok && modelCheck.ok, checks: { database, model: modelCheck } }
    },
  }
}

export type HealthService = ReturnType<typeof createHealthService>
