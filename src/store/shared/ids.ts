// Opaque public ids the store makes itself, the same in every engine.
import { randomBytes } from 'node:crypto'

/** The id an organisation is known by in the API: `org_` and 24 hex characters. */
export const newOrgPublicId = (): string => `org_${randomBytes(12).toString('hex')}`
