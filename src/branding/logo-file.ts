import { readFileSync, statSync } from 'node:fs'
import { BrandingError } from './branding.ts'
import { MAX_LOGO_BYTES } from './logo-image.ts'

/**
 * A logo file the operator names on the command line (`clients update ID --logo FILE`). A file over the
 * bound is refused without being read; what is read is then checked as any upload is.
 */
export function readLogoFile(path: string): Uint8Array {
  let size: number
  let bytes: Uint8Array
  try {
    size = statSync(path).size
    if (size > MAX_LOGO_BYTES) throw new BrandingError('too_large', `the logo is refused: the file has ${size} bytes; a logo has at most ${MAX_LOGO_BYTES} (1 MiB)`)
    bytes = new Uint8Array(readFileSync(path))
  } catch (cause) {
    if (cause instanceof BrandingError) throw cause
    throw new BrandingError('unreadable', `the logo file cannot be read: ${path}`)
  }
  return bytes
}
