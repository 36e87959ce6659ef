// Per-request facts the outer server learns (id, client address) and the app needs (errors, limits).
import type { Caller } from '../modules/auth/service'

export type RequestMeta = { id: string; client: string; caller?: Caller }

const metaByRequest = new WeakMap<Request, RequestMeta>()

export function setRequestMeta(request: Request, meta: RequestMeta): void {
  metaByRequest.set(request, meta)
}

export function requestMeta(request: Request): RequestMeta | undefined {
  return metaByRequest.get(request)
}
