// The opaque ids of organisations as the API shows and takes them; one definition for every module's schemas.
import { z } from 'zod'

export const OrgId = z
  .string()
  .regex(/^org_[0-9a-f]{24}$/u, 'must be an organisation id: org_ and 24 hex characters')
  .meta({ description: 'An organisation id (`org_…`), opaque.', examples: ['org_5f0c3e9a1b2d4c6e8f0a1b2c'] })
