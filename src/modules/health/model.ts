import { z } from 'zod'

export const HealthResponse = z.object({ status: z.literal('ok'), version: z.string() })

const Check = z.object({ ok: z.boolean(), detail: z.string() })

export const ReadyResponse = z.object({ status: z.literal('ready'), version: z.string(), checks: z.object({ database: Check, model: Check }) })
