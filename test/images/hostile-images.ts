import { deflateSync } from 'node:zlib'

/**
 * Hostile images written byte by byte, for the tests and bench/hostile-images.ts: nothing is fetched. The JPEG
 * is built the way the attack round described it (issue 30): a progressive JPEG inside every size and pixel
 * bound whose thousands of tiny scans each make a decoder visit every block. The PNG is a "zlib bomb": a
 * small image whose compressed data unpacks to far more than its pixels.
 */

const u16 = (value: number) => [value >> 8, value & 0xff]
const segment = (marker: number, body: number[]) => [0xff, marker, ...u16(body.length + 2), ...body]

/**
 * A progressive (SOF2), one-component JPEG of `width` × `height` with `scans` scans. The first is the DC
 * scan (every block's DC difference coded as 0, one bit a block); every other scan is an AC scan (spectral
 * selection 1..63) whose only Huffman code is EOB14, an end-of-band run of up to 32,767 blocks, so that
 * its whole entropy-coded data is two bytes for each 32,767 blocks that say "nothing in any of these". A
 * decoder that walks the blocks of each scan (jpeg-js, libjpeg) does width × height / 64 steps a scan
 * for 12 bytes (2048 × 1024).
 */
export function manyScansJpeg(options: { width: number; height: number; scans: number }): Uint8Array<ArrayBuffer> {
  const { width, height, scans } = options
  const blocks = Math.ceil(width / 8) * Math.ceil(height / 8)
  const bytes: number[] = [0xff, 0xd8]
  bytes.push(...segment(0xdb, [0x00, ...new Array<number>(64).fill(1)]))
  bytes.push(...segment(0xc2, [8, ...u16(height), ...u16(width), 1, 1, 0x11, 0]))
  // DC table 0: one code "0" for category 0. AC table 0: one code "0" for 0xE0 (run 14, size 0: EOB14).
  const oneCode = (symbol: number) => [1, ...new Array<number>(15).fill(0), symbol]
  bytes.push(...segment(0xc4, [0x00, ...oneCode(0x00)]))
  bytes.push(...segment(0xc4, [0x10, ...oneCode(0xe0)]))
  // DC scan: one 0 bit a block, padded with 1s; a 0xff byte would need a stuffed 0 after it, and none occurs.
  bytes.push(...segment(0xda, [1, 1, 0x00, 0, 0, 0x00]))
  for (let i = 0; i < Math.ceil(blocks / 8); i++) bytes.push(0x00)
  // "0" (EOB14) then 14 bits of run length, all 1: a run of 32,767 blocks, as many times as the frame needs.
  const runs = Math.ceil(blocks / 32_767)
  const acData = entropyCoded(Array.from({ length: runs }, () => '0' + '1'.repeat(14)).join(''))
  for (let scan = 1; scan < scans; scan++) bytes.push(...segment(0xda, [1, 1, 0x00, 1, 63, 0x00]), ...acData)
  bytes.push(0xff, 0xd9)
  return new Uint8Array(bytes)
}

/** Bits ("0101…") as entropy-coded bytes: padded with 1s, a 0 stuffed after each 0xFF (T.81 F.1.2.3). */
function entropyCoded(bits: string): number[] {
  const padded = bits.padEnd(Math.ceil(bits.length / 8) * 8, '1')
  const out: number[] = []
  for (let i = 0; i < padded.length; i += 8) {
    const byte = parseInt(padded.slice(i, i + 8), 2)
    out.push(byte)
    if (byte === 0xff) out.push(0x00)
  }
  return out
}

/** A PNG chunk with its CRC (PNG §5.3: over the type and the data). */
function pngChunk(type: string, data: Uint8Array): number[] {
  const body = [...type].map((c) => c.charCodeAt(0)).concat([...data])
  const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
  return [...be32(data.length), ...body, ...be32(Bun.hash.crc32(Uint8Array.from(body)))]
}

/**
 * An RGBA PNG of `width` × `height` whose image data is `unpackedBytes` zero bytes, deflated: each row's filter
 * byte and pixels are 0 (transparent black) as far as the image goes, and the rest is more of the same. zlib
 * packs a megabyte of zeros into about a kilobyte.
 */
export function zlibBombPng(options: { width: number; height: number; interlaced?: boolean; unpackedBytes: number }): Uint8Array<ArrayBuffer> {
  const { width, height, interlaced = false, unpackedBytes } = options
  const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
  const ihdr = Uint8Array.from([...be32(width), ...be32(height), 8, 6, 0, 0, interlaced ? 1 : 0])
  const data = deflateSync(new Uint8Array(unpackedBytes), { level: 9 })
  return Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, ...pngChunk('IHDR', ihdr), ...pngChunk('IDAT', data), ...pngChunk('IEND', new Uint8Array(0))])
}
