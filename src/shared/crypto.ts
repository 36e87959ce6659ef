import { randomBytes } from 'node:crypto'

export function sha256Hex(value: string | Uint8Array): string {
  // Bun's one-shot hasher: no hash object per call (this runs for every authenticated request).
  return Bun.SHA256.hash(value, 'hex')
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString('hex')
}

export function randomToken(bytes: number): string {
  return randomBytes(bytes).toString('base64url')
}
