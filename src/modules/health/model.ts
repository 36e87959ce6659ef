import { z } from 'zod'

export const HealthResponse = z.object({ status: z.literal('ok'), version: z.string() }).meta({ id: 'Liveness' })

const Check = z.object({ ok: z.boolean(), detail: z.string() })

const Hosts = z.object({ healthy: z.number().int(), total: z.number().int() }).meta({ description: 'Model hosts taking calls now, of those configured.' })

const Checks = z.object({
  database: Check,
  model: Check,
  redis: Check.optional().meta({
    description:
      'Present with ALTTEXT_REDIS_URL (Redis takes a write), and with several replicas on PostgreSQL without Redis (passes, saying that limits hold per replica).',
  }),
  changes: Check.optional().meta({
    description:
      'Present on PostgreSQL: whether this replica hears the account changes of the others (its own heartbeat comes back within 1 s). Never makes the replica unready: while `ok` is false it serves without its key and credit caches, which is correct, and reconnects.',
  }),
})

export const ReadyResponse = z.object({ status: z.literal('ready'), version: z.string(), checks: Checks, hosts: Hosts })

export const NotReadyResponse = z.object({
  error: z.object({ code: z.literal('not_ready'), message: z.string(), docs: z.string() }),
  checks: Checks,
  hosts: Hosts,
})
