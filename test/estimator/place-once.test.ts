import { afterAll, describe, expect, test } from 'bun:test'
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { placeOnce } from '../../src/estimator/embedded-assets.ts'

/** The folder the compiled binary writes its face models and onnxruntime's library to, in $TMPDIR. */
const base = mkdtempSync(join(tmpdir(), 'ofage-place-once-'))
afterAll(() => rmSync(base, { recursive: true, force: true }))

describe('placeOnce', () => {
  test('fills the folder once; a second start finds it and writes nothing', () => {
    const root = join(base, 'models')
    let fills = 0
    const fill = (staging: string) => {
      fills++
      writeFileSync(join(staging, 'model.bin'), 'weights')
    }
    placeOnce(root, fill)
    placeOnce(root, fill)
    expect(fills).toBe(1)
    expect(readFileSync(join(root, 'model.bin'), 'utf8')).toBe('weights')
  })

  test('refuses a folder that others may write, or a link where the folder should be: another user could have planted it', () => {
    const writable = join(base, 'writable')
    mkdirSync(writable)
    chmodSync(writable, 0o777)
    expect(() => placeOnce(writable, () => {})).toThrow('is not a folder of this user')
    const planted = join(base, 'planted')
    mkdirSync(planted)
    const link = join(base, 'link')
    symlinkSync(planted, link)
    expect(() => placeOnce(link, () => {})).toThrow('is not a folder of this user')
  })

  test.skipIf(process.getuid?.() !== 0)("refuses a folder of another user's (run as root, which can make one)", () => {
    const theirs = join(base, 'theirs')
    mkdirSync(theirs, { mode: 0o755 })
    chownSync(theirs, 65534, 65534)
    let filled = false
    expect(() => placeOnce(theirs, () => void (filled = true))).toThrow('is not a folder of this user')
    expect(filled).toBe(false)
    expect(existsSync(join(theirs, 'libonnxruntime.so.1'))).toBe(false)
  })
})
