// Shared assertions on the contract's error shape.
import { expect } from 'bun:test'
import type { ApiResponse } from './service'

/** The structured error of the decisions: status, code, a message (naming `field` when given), docs link. */
export function expectApiError(res: ApiResponse, status: number, code: string, field?: string) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toContain('application/json')
  expect(res.body).toEqual({ error: { code, message: expect.any(String), docs: `http://alttext.test/docs/errors#${code}` } })
  if (field) expect(res.body.error.message).toContain(field)
}
