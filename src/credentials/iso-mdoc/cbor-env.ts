/**
 * @auth0/mdl, loaded only once CBOR_NATIVE_ACCELERATION_DISABLED is set. cbor-x (under @auth0/mdl and
 * cose-kit) reads that variable once, when it is first loaded, and otherwise loads its native string
 * extractor, cbor-extract, where installed: reported to break mdoc verification under Bun, and in any case
 * not the decoder our tests run.
 *
 * A static `import '@auth0/mdl'` placed after an import of this file would not do: Bun evaluates CommonJS
 * packages before the body of any ES module that imports them, so cbor-x would be loaded before the line
 * below ran. `require` runs where it stands. Every module takes @auth0/mdl from here; `import type` from
 * the package itself is fine (it loads nothing).
 *
 * It loads at its first use, not with this module: the library with cbor-x and cose-kit is about 16 MiB of
 * a process's memory, and a process that never sees an mdoc (most of them) need not hold it.
 */
import type { DataItem } from '@auth0/mdl'

process.env.CBOR_NATIVE_ACCELERATION_DISABLED ??= 'true'

type Mdl = typeof import('@auth0/mdl')
let library: Mdl | undefined

export function mdl(): Mdl {
  return (library ??= require('@auth0/mdl') as Mdl)
}

/** CBOR with the library's own encoder options, so our bytes are the ones it would make. */
export function encodeCbor(value: unknown): Uint8Array {
  return mdl().DataItem.fromData(value).buffer
}

/** `#6.24(bstr .cbor value)`: what ISO 18013-5 calls the "Bytes" of a structure (ItemsRequestBytes...). */
export function taggedCbor(value: unknown): DataItem {
  return mdl().DataItem.fromData(value)
}
