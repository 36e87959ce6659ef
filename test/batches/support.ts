// Shared by the batch tests: create a batch over HTTP and await its end by polling GET /api/batches/{id}.
import type { ApiResponse, Api } from '../support/service'
import { waitUntil } from '../support/service'

export type BatchBody = { items: Record<string, unknown>[]; webhook_url?: string }

export function batchClient(api: Api, key: string) {
  return {
    create: (body: BatchBody, headers: Record<string, string> = {}) => api.request('POST', '/api/batches', { body, key, headers }),
    get: (id: string) => api.get(`/api/batches/${id}`, key),
    list: (query = '') => api.get(`/api/batches${query}`, key),
    cancel: (id: string) => api.request('POST', `/api/batches/${id}/cancel`, { key }),
    /** Polls until the batch has ended (completed_at set) and returns its last view. */
    async ended(id: string, timeoutMs = 20_000): Promise<ApiResponse> {
      let last: ApiResponse | undefined
      await waitUntil(
        async () => {
          last = await api.get(`/api/batches/${id}`, key)
          return last.status === 200 && last.body.completed_at !== null
        },
        `batch ${id} to end`,
        timeoutMs,
      )
      return last!
    },
  }
}
