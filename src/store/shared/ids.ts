// Opaque public ids the store makes itself, the same in every engine.
import { randomBytes } from 'node:crypto'

/** The id an organisation is known by in the API: `org_` and 24 hex characters. */
export const newOrgPublicId = (): string => `org_${randomBytes(12).toString('hex')}`

/** A webhook delivery's id, also sent as its Alttext-Delivery header: `whd_` and 24 hex characters. */
export const newDeliveryId = (): string => `whd_${randomBytes(12).toString('hex')}`
