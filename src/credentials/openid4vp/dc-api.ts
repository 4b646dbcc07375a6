import { ageQuery } from '../queries.ts'
import { clientMetadata } from './client-metadata.ts'

/**
 * The Digital Credentials API request (OpenID4VP 1.0 Appendix A): unsigned, answered to the page's
 * script (`dc_api`); the browser binds it to our origin, so the audience is `origin:<origin>`.
 */
export function digitalCredentialsRequest(nonce: string, threshold: number) {
  return {
    protocol: 'openid4vp-v1-unsigned',
    data: { response_type: 'vp_token', response_mode: 'dc_api', nonce, dcql_query: ageQuery(threshold), client_metadata: clientMetadata },
  }
}
