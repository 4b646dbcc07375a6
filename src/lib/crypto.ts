import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/** A random token of `bytes` bytes of entropy, base64url without padding (safe in URLs and headers). */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url')
}

export function sha256Hex(value: string | Uint8Array): string {
  return createHash('sha256').update(value).digest('hex')
}

export function hmacHex(key: Uint8Array, value: string): string {
  return createHmac('sha256', key).update(value).digest('hex')
}

/**
 * Compares two strings in time that depends only on their lengths, so a wrong guess leaks nothing about
 * how much of it was right. Callers compare fixed-length digests, never raw secrets.
 */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}
