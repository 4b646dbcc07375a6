import { dlopen, FFIType, ptr } from 'bun:ffi'
import { createPublicKey, verify, type KeyObject } from 'node:crypto'

/**
 * RS256 signatures by the system's OpenSSL 3 (libcrypto.so.3), called through bun:ffi, where the library
 * loads. Bun's own crypto is BoringSSL, which has no AVX-512 code for RSA: on CPUs with it OpenSSL signs
 * 2–2.5× faster (docs/performance.md, issue 34), and a signature is most of a token exchange's CPU. The call
 * is synchronous, on the calling thread, a few hundred microseconds. Where libcrypto.so.3 is missing (the
 * slim container image) or a probe signature does not verify, the caller signs with WebCrypto instead.
 */
export const LIBCRYPTO = 'libcrypto.so.3'

const symbols = {
  OpenSSL_version: { args: [FFIType.i32], returns: FFIType.cstring },
  d2i_AutoPrivateKey: { args: [FFIType.ptr, FFIType.ptr, FFIType.i64], returns: FFIType.ptr },
  EVP_PKEY_get_size: { args: [FFIType.ptr], returns: FFIType.i32 },
  EVP_PKEY_free: { args: [FFIType.ptr], returns: FFIType.void },
  EVP_sha256: { args: [], returns: FFIType.ptr },
  EVP_MD_CTX_new: { args: [], returns: FFIType.ptr },
  EVP_MD_CTX_free: { args: [FFIType.ptr], returns: FFIType.void },
  EVP_DigestSignInit: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr], returns: FFIType.i32 },
  EVP_DigestSign: { args: [FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.ptr, FFIType.u64], returns: FFIType.i32 },
  ERR_clear_error: { args: [], returns: FFIType.void },
} as const

type Libcrypto = ReturnType<typeof dlopen<typeof symbols>>['symbols']

/**
 * Names that OpenSSL's functions call each other by. Should anything already loaded (the runtime itself, if a
 * version of Bun exported its BoringSSL as Node exports its OpenSSL) define one of them, the dynamic linker
 * could bind OpenSSL's internal calls to it, and two libraries' structures would mix: OpenSSL is not used then.
 */
export const OPENSSL_NAMES = ['EVP_DigestSign', 'EVP_DigestSignInit', 'EVP_sha256', 'EVP_PKEY_free', 'CRYPTO_malloc', 'ERR_clear_error', 'BN_new', 'RSA_new', 'OPENSSL_init_crypto']

/** Whether any of `names` is defined in the process's global scope (glibc's `dlsym(RTLD_DEFAULT, …)`); true where that cannot be asked. */
function definedAlready(names: readonly string[]): boolean {
  try {
    const { dlsym } = dlopen('libc.so.6', { dlsym: { args: [FFIType.ptr, FFIType.cstring], returns: FFIType.ptr } }).symbols
    return names.some((name) => dlsym(null, Buffer.from(`${name}\0`)) !== null)
  } catch {
    return true
  }
}

const loaded = new Map<string, Libcrypto | undefined>()

function libcrypto(name: string, clashes: readonly string[]): Libcrypto | undefined {
  if (!loaded.has(name)) {
    let library: Libcrypto | undefined
    try {
      library = definedAlready(clashes) ? undefined : dlopen(name, symbols).symbols
    } catch {
      library = undefined
    }
    loaded.set(name, library)
  }
  return loaded.get(name)
}

/** Frees OpenSSL's copy of a private key once nothing can sign with it (a rotation replaced it). */
const keys = new FinalizationRegistry<() => void>((free) => free())

export type OpenSslSigner = {
  /** The RS256 (RSASSA-PKCS1-v1_5 with SHA-256) signature of `input`. */
  sign(input: Uint8Array): Uint8Array
  /** OpenSSL's version line, for the start-up log. */
  version: string
}

/**
 * `privateKey` (an RSA key) held by OpenSSL, or undefined where `library` cannot be loaded, another library
 * already defines one of `clashes` (OPENSSL_NAMES), or it does not sign correctly.
 */
export function openSslRs256(privateKey: KeyObject, library = LIBCRYPTO, clashes: readonly string[] = OPENSSL_NAMES): OpenSslSigner | undefined {
  const lib = libcrypto(library, clashes)
  if (!lib) return undefined
  const der = new Uint8Array(privateKey.export({ type: 'pkcs8', format: 'der' }))
  const cursor = new BigUint64Array([BigInt(ptr(der))])
  const key = lib.d2i_AutoPrivateKey(null, ptr(cursor), der.length)
  der.fill(0)
  if (!key) {
    lib.ERR_clear_error()
    return undefined
  }
  const size = lib.EVP_PKEY_get_size(key)
  if (size <= 0) {
    lib.EVP_PKEY_free(key)
    return undefined
  }
  const sha256 = lib.EVP_sha256()
  const length = new BigUint64Array(1)
  const sign = (input: Uint8Array): Uint8Array => {
    const signature = new Uint8Array(size)
    const context = lib.EVP_MD_CTX_new()
    if (!context) throw new Error('OpenSSL could not allocate a digest context')
    length[0] = BigInt(size)
    try {
      const signed = lib.EVP_DigestSignInit(context, null, sha256, null, key) === 1 && lib.EVP_DigestSign(context, ptr(signature), ptr(length), ptr(input), input.length) === 1
      if (!signed || length[0] !== BigInt(size)) {
        lib.ERR_clear_error()
        throw new Error('OpenSSL could not sign with the signing key')
      }
    } finally {
      lib.EVP_MD_CTX_free(context)
    }
    return signature
  }
  // OpenSSL's key lives as long as the function that signs with it: what callers keep.
  keys.register(sign, () => lib.EVP_PKEY_free(key))
  const signer: OpenSslSigner = { sign, version: `${lib.OpenSSL_version(0)} (${library})` }
  // A library that loads but signs otherwise than expected (another ABI, a provider that refuses RSA) is not used.
  const probe = new TextEncoder().encode('ofage: a probe of OpenSSL signing')
  try {
    return verify('sha256', probe, createPublicKey(privateKey), signer.sign(probe)) ? signer : undefined
  } catch {
    return undefined
  }
}
