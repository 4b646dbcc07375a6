import type { ResponseEncryptionPublicKey } from './response-encryption-key.ts'

/**
 * The content encryption algorithms we accept for an encrypted response, and advertise in every request
 * that asks for one. HAIP 1.0 §5: Verifiers MUST list both `A128GCM` and `A256GCM` in
 * `encrypted_response_enc_values_supported`; a wallet picks one of them.
 */
export const RESPONSE_ENC_VALUES = ['A128GCM', 'A256GCM'] as const

/** What we accept, in every request (OpenID4VP 1.0 §11.1 `vp_formats_supported`): ES256 throughout. */
export const VP_FORMATS_SUPPORTED = {
  'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256'] },
  mso_mdoc: { issuerauth_alg_values: [-7], deviceauth_alg_values: [-7] },
}

/**
 * The `client_metadata` of a request (OpenID4VP 1.0 §5.1), built here only. With `encryptionKey` the
 * response is to be encrypted (§8.3): the key is passed in `jwks`, the only one there, so the wallet has
 * nothing to choose, and `encrypted_response_enc_values_supported` names the `enc` values we accept.
 */
export function buildClientMetadata(encryptionKey?: ResponseEncryptionPublicKey, rpMetadata?: string) {
  // Google Wallet shows the relying party named by these bytes, whose hash its certificate carries (deploy.md).
  const display = rpMetadata === undefined ? {} : { gw_rp_metadata_bytes: rpMetadata }
  if (!encryptionKey) return { vp_formats_supported: VP_FORMATS_SUPPORTED, ...display }
  return {
    vp_formats_supported: VP_FORMATS_SUPPORTED,
    jwks: { keys: [encryptionKey] },
    encrypted_response_enc_values_supported: [...RESPONSE_ENC_VALUES],
    ...display,
  }
}
