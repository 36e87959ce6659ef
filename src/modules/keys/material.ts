// Key format (decisions): `alt_` + 64 lowercase hex from 32 random bytes; prefix = `alt_` + first 8 hex.
import { randomHex, sha256Hex } from '../../shared/crypto'
import type { NewKey } from '../../store/contract'

export const API_KEY_PATTERN = /^alt_[0-9a-f]{64}$/

export type MintedKey = { apiKey: string; record: NewKey }

export function mintKey(label: string | null, expiresAt: number | null): MintedKey {
  const apiKey = `alt_${randomHex(32)}`
  return { apiKey, record: { prefix: apiKey.slice(0, 12), keyHash: hashKey(apiKey), label, expiresAt } }
}

export function hashKey(apiKey: string): string {
  return sha256Hex(apiKey)
}

/** Mints a key whose prefix no stored key has (a 32-bit prefix clashes rarely, but it must be unique). */
export async function mintUniqueKey(prefixExists: (prefix: string) => Promise<boolean>, label: string | null, expiresAt: number | null): Promise<MintedKey> {
  for (let attempt = 0; attempt < 8; attempt++) {
    const minted = mintKey(label, expiresAt)
    if (!(await prefixExists(minted.record.prefix))) return minted
  }
  throw new Error('could not mint a key with a unique prefix')
}

export const SAVE_KEY_MESSAGE = 'Save this key now: it is shown only once and cannot be recovered. Rotate it if it is lost.'
