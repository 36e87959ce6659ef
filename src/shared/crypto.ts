import { createHash, randomBytes } from 'node:crypto'

export function sha256Hex(value: string | Uint8Array): string {
  return createHash('sha256').update(value).digest('hex')
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex')
}

export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url')
}
