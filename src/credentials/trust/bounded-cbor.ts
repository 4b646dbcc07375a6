import { mdl } from '../iso-mdoc/cbor-env.ts'

/** How deep one CBOR item may nest (arrays, maps and tags), and which tags it may carry. */
export type CborLimits = { maxDepth: number; tags: ReadonlySet<number> }

/**
 * Decodes bytes that hold exactly one CBOR item, or undefined when they do not, or break `limits`. The bytes
 * are walked first without recursion: every length must fit in what is left (a header claiming four billion
 * items is refused before anything is allocated), nesting stops at `maxDepth`, indefinite lengths are refused
 * (ISO 18013-5 §8.1 asks for definite lengths), and so is any tag not in `limits.tags`: cbor-x gives meanings
 * of its own to tags such as 28/29 (shared references, which can build cycles), and nothing we read needs them.
 * Only then does @auth0/mdl's cbor-x decode it: dates (tags 0, 1) as Date, biguint (tag 2) as bigint, byte
 * strings as Buffer, maps as Map.
 */
export function decodeBoundedCbor(bytes: Uint8Array, limits: CborLimits): { value: unknown } | undefined {
  if (!isBoundedCbor(bytes, limits)) return undefined
  try {
    return { value: new (mdl().DataItem)({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) }).data }
  } catch {
    return undefined
  }
}

function isBoundedCbor(bytes: Uint8Array, { maxDepth, tags }: CborLimits): boolean {
  let offset = 0
  // Items still to read at each open level; the first level holds the one top-level item.
  const pending = [1]
  while (pending.length > 0) {
    if (pending[pending.length - 1] === 0) {
      pending.pop()
      continue
    }
    pending[pending.length - 1]!--
    if (offset >= bytes.length) return false
    const initial = bytes[offset++]!
    const [major, info] = [initial >> 5, initial & 0x1f]
    let argument = info
    if (info >= 24 && info <= 27) {
      const size = 1 << (info - 24)
      if (offset + size > bytes.length) return false
      argument = 0
      // Past 2^53 the value is approximate, which is enough: no length that large fits in `bytes`.
      for (let i = 0; i < size; i++) argument = argument * 256 + bytes[offset++]!
    } else if (info > 27) {
      return false
    }
    if (major === 2 || major === 3) {
      if (argument > bytes.length - offset) return false
      offset += argument
    } else if (major === 4 || major === 5 || major === 6) {
      if (major === 6 && !tags.has(argument)) return false
      const items = major === 4 ? argument : major === 5 ? argument * 2 : 1
      // Every item takes at least one byte.
      if (items > bytes.length - offset) return false
      if (items > 0) {
        if (pending.length > maxDepth) return false
        pending.push(items)
      }
    }
  }
  return offset === bytes.length
}

/** A CBOR byte string as cbor-x decodes it (a Buffer). */
export function isBytes(value: unknown): value is Uint8Array {
  return value instanceof Uint8Array
}
