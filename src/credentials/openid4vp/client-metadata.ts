/** What we accept, in every request (OpenID4VP 1.0 §11.1 `vp_formats_supported`): ES256 throughout. */
export const clientMetadata = {
  vp_formats_supported: {
    'dc+sd-jwt': { 'sd-jwt_alg_values': ['ES256'], 'kb-jwt_alg_values': ['ES256'] },
    mso_mdoc: { issuerauth_alg_values: [-7], deviceauth_alg_values: [-7] },
  },
}
