import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { OAuthError } from '../errors.ts'
import { findClient } from '../clients/registry.ts'
import { isClientIdShape } from '../clients/model.ts'
import { findClientLogo } from './branding.ts'
import type { HexColour } from './contrast.ts'
import { logoVersion, themeStylesheet, themeVersion } from './page-branding.ts'

const BrandingParams = t.Object({ client_id: t.String({ maxLength: 256 }) })
const VersionQuery = t.Object({ v: t.Optional(t.String({ maxLength: 64 })) })

/**
 * A site's logo and accent stylesheet, from our own origin (the page's CSP allows `img-src 'self'` and
 * `style-src 'self'`, nothing else). A URL whose version is the current one may be kept a year; any other
 * (an old page, none) gets the current file, to be checked again next time.
 */
export function brandingRoutes(deps: AppDeps) {
  return new Elysia({ name: 'branding-routes' })
    .get(
      '/branding/:client_id/logo.png',
      async ({ params, query }) => {
        const logo = isClientIdShape(params.client_id) ? await findClientLogo(deps.db, params.client_id) : undefined
        if (!logo) throw new OAuthError('not_found', 'This site has no logo')
        return new Response(logo.png, { headers: fileHeaders('image/png', query.v === logoVersion(logo)) })
      },
      { params: BrandingParams, query: VersionQuery, detail: { hide: true } },
    )
    .get(
      '/branding/:client_id/theme.css',
      async ({ params, query }) => {
        const accent = (await findClient(deps.db, params.client_id))?.accentColour as HexColour | null | undefined
        if (!accent) throw new OAuthError('not_found', 'This site has no accent colour')
        return new Response(themeStylesheet(accent), { headers: fileHeaders('text/css; charset=utf-8', query.v === themeVersion(accent)) })
      },
      { params: BrandingParams, query: VersionQuery, detail: { hide: true } },
    )
}

/**
 * The file's headers. nosniff: a browser takes it for what we say it is and nothing else; a CSP of its own
 * (`default-src 'none'`): opened on its own, it may load and run nothing; same-origin: other sites may not embed it.
 */
function fileHeaders(type: string, current: boolean): Record<string, string> {
  return {
    'content-type': type,
    'x-content-type-options': 'nosniff',
    'content-security-policy': "default-src 'none'",
    'cross-origin-resource-policy': 'same-origin',
    'cache-control': current ? 'public, max-age=31536000, immutable' : 'no-cache',
  }
}
