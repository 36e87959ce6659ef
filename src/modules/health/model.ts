import { z } from 'zod'

export const HealthResponse = z.object({ status: z.literal('ok'), version: z.string() }).meta({ id: 'Liveness' })

const Check = z.object({ ok: z.boolean(), detail: z.string() })

const Hosts = z.object({ healthy: z.number().int(), total: z.number().int() }).meta({ description: 'Model hosts taking calls now, of those configured.' })

export const ReadyResponse = z.object({ status: z.literal('ready'), version: z.string(), checks: z.object({ database: Check, model: Check }), hosts: Hosts })

export const NotReadyResponse = z.object({
  error: z.object({ code: z.literal('not_ready'), message: z.string(), docs: z.string() }),
  checks: z.object({ database: Check, model: Check }),
  hosts: Hosts,
})
