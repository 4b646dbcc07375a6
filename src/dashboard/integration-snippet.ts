/**
 * The integration snippet of the settings page, filled with a client's real values: the environment of the
 * site's backend, and the client library's start and finish functions from docs/integration.md §3 with the
 * client's first redirect URI and its threshold written in. test/dashboard/settings.test.ts holds the code
 * to the guide's snippet, which test/docs.test.ts runs against a real server.
 */
export type SnippetClient = { id: string; redirectUris: string[]; minAge: number | null; sandbox: boolean }

/** The threshold a new integration asks for: the client's `min_age` when it has one, else the spec's default. */
const DEFAULT_AGE = 18

export function integrationEnvironment(client: SnippetClient, publicUrl: string, secretPlaceholder: string): string {
  return [
    `OFAGE_URL=${publicUrl}`,
    `OFAGE_CLIENT_ID=${client.id}`,
    `OFAGE_CLIENT_SECRET=${secretPlaceholder}`,
    // A test client's tokens say sandbox: true, and the code below refuses them unless told otherwise.
    ...(client.sandbox ? ['OFAGE_SANDBOX=1'] : []),
  ].join('\n')
}

export function integrationCode(client: SnippetClient): string {
  const redirectUri = client.redirectUris[0] ?? ''
  const literal = `'${redirectUri.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`
  // Functions, not strings, as replacements: a `$` in the URI is then just a character.
  return LIBRARY_SNIPPET.replace('$REDIRECT_URI', () => literal).replace('$AGE', () => String(client.minAge ?? DEFAULT_AGE))
}

const LIBRARY_SNIPPET = `import { OfageClient } from 'ofage/client'

const ofage = new OfageClient({ baseUrl: process.env.OFAGE_URL!, clientId: process.env.OFAGE_CLIENT_ID!, clientSecret: process.env.OFAGE_CLIENT_SECRET! })
const REDIRECT_URI = $REDIRECT_URI
const AGE = $AGE

/** Where to send the visitor; \`session\` is your server-side session for them. */
export async function startAgeCheck(session: Record<string, string>): Promise<string> {
  const start = await ofage.authorizationUrl({ redirectUri: REDIRECT_URI, ageRequired: AGE })
  session.ageState = start.state
  session.ageVerifier = start.codeVerifier
  return start.url
}

/** At REDIRECT_URI: whether the visitor proved they are AGE or older. */
export async function finishAgeCheck(callback: URL, session: Record<string, string>): Promise<boolean> {
  if (!session.ageState || callback.searchParams.get('state') !== session.ageState) return false
  const exchanged = await ofage.exchangeCode({ code: callback.searchParams.get('code') ?? '', redirectUri: REDIRECT_URI, codeVerifier: session.ageVerifier })
  if (!exchanged.ok) return false // exchanged.error says why: docs/errors.md
  // A test client's tokens are refused unless you say so, as in development with OFAGE_SANDBOX=1.
  const check = await ofage.verifyAgeToken(exchanged.accessToken, { minimumAge: AGE, allowSandbox: process.env.OFAGE_SANDBOX === '1' })
  return check.ok
}
`
