import { html } from '@elysiajs/html'
import type { PropsWithChildren } from '@kitajs/html'
import { Elysia, t } from 'elysia'
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose'
import type { AppDeps } from '../deps.ts'
import { constantTimeEqual, randomToken } from '../lib/crypto.ts'
import { pageHeaders } from '../web/headers.ts'
import { Layout } from '../pages/layout.tsx'
import { DEMO_CLIENT_ID, demoClientSecret, demoRedirectUri } from './demo-client.ts'

const STATE_COOKIE = 'ofage_demo_state'

/** How the demo reaches the API: a Request in, a Response out, through the app's whole HTTP pipeline. */
export type ApiFetch = (request: Request) => Promise<Response>

/**
 * `/demo`: a tiny relying party that uses ofage exactly as an integrating site would — a link to the
 * hosted page with `state`, the callback, the code exchange with its client secret (server-side), and
 * validation both by the API and locally with the published key set (SPEC.md §4.8).
 */
export function demoRoutes(deps: AppDeps, api: ApiFetch) {
  const { publicUrl, appUrl, issuerUrl } = deps.config
  const redirectUri = demoRedirectUri(publicUrl)
  const headers = pageHeaders()
  const cookieOptions = { httpOnly: true, sameSite: 'lax' as const, secure: publicUrl.startsWith('https:'), path: '/demo' }
  const call = (path: string, init?: RequestInit) => api(new Request(`${publicUrl}${path}`, init))

  return new Elysia({ name: 'demo-routes' })
    .use(html({ autoDoctype: true }))
    .get(
      '/demo',
      ({ set }) => {
        Object.assign(set.headers, headers)
        return (
          <DemoPage title="ofage demo shop">
            <p>
              This is a pretend shop that sells age-restricted goods. It uses ofage the way your site would: the button
              sends you to the hosted age check, and when you come back the shop's server exchanges the code for a
              signed token and checks it.
            </p>
            <p>The demo uses a sandbox client, so the check is a test form: enter any age.</p>
            <p>
              <a class="button" href="/demo/start?age=18">
                Verify I am 18 or older
              </a>
            </p>
            <p>
              <a class="button" href="/demo/start?age=21">
                Verify I am 21 or older
              </a>
            </p>
          </DemoPage>
        )
      },
      { detail: { hide: true } },
    )
    .get(
      '/demo/start',
      ({ query, cookie, set, redirect }) => {
        const state = randomToken(16)
        cookie[STATE_COOKIE]!.set({ value: state, ...cookieOptions, maxAge: 30 * 60 })
        const target = new URL(`${appUrl}/`)
        target.search = new URLSearchParams({
          client_id: DEMO_CLIENT_ID,
          redirect_uri: redirectUri,
          state,
          age_required: query.age ?? '18',
        }).toString()
        Object.assign(set.headers, headers)
        return redirect(target.toString(), 303)
      },
      { query: t.Object({ age: t.Optional(t.String({ pattern: '^[1-9][0-9]?$' })) }), detail: { hide: true } },
    )
    .get(
      '/demo/callback',
      async ({ query, cookie, set }) => {
        Object.assign(set.headers, headers)
        const expected = cookie[STATE_COOKIE]?.value
        cookie[STATE_COOKIE]!.set({ value: '', ...cookieOptions, maxAge: 0 })
        if (!query.code || !query.state || typeof expected !== 'string' || !constantTimeEqual(query.state, expected)) {
          set.status = 400
          return <DemoProblem message="The callback's state does not match the one this browser started with. Start again." />
        }
        const exchange = await call('/api/oauth/token', {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: `Basic ${Buffer.from(`${DEMO_CLIENT_ID}:${demoClientSecret(deps)}`).toString('base64')}`,
          },
          body: JSON.stringify({ grant_type: 'authorization_code', code: query.code, redirect_uri: redirectUri, state: query.state }),
        })
        const token = (await exchange.json()) as { access_token?: string; transaction_id?: string; error?: string; error_description?: string }
        if (!exchange.ok || !token.access_token) {
          // A refused code (stale, reused, made up) came from the visitor's URL: their request, not our upstream, failed.
          set.status = exchange.status >= 500 ? 502 : 400
          return <DemoProblem message={`The code exchange failed: ${token.error ?? exchange.status} ${token.error_description ?? ''}`} />
        }
        const validation = (await (await call(`/api/verify/token/${token.access_token}`)).json()) as Record<string, unknown>
        const jwks = (await (await call('/api/.well-known/jwks.json')).json()) as JSONWebKeySet
        const { payload } = await jwtVerify(token.access_token, createLocalJWKSet(jwks), {
          algorithms: ['RS256'],
          issuer: issuerUrl,
          currentDate: deps.clock.now(),
        })
        return (
          <DemoPage title="Age verified · ofage demo shop">
            <p class="ok" role="status" safe>
              {`Verified: ${String(payload.age_over)} or older.`}
            </p>
            <p>
              The shop exchanged the code at <code>POST /api/oauth/token</code>, then validated the token with{' '}
              <code>GET /api/verify/token/…</code> (valid: <strong safe>{String(validation.valid)}</strong>) and locally with
              the key set (signature and issuer checked). These are the token's claims:
            </p>
            <p>
              The exchange's <code>transaction_id</code> (the token's <code>verification_id</code>):{' '}
              <code id="transaction-id" safe>
                {token.transaction_id ?? ''}
              </code>
              . The demo client's dashboard users find this verification by it in <a href="/dashboard/audit">the audit log</a>.
            </p>
            <dl class="claims">
              {Object.entries(payload).map(([name, value]) => (
                <>
                  <dt safe>{name}</dt>
                  <dd safe>{JSON.stringify(value)}</dd>
                </>
              ))}
            </dl>
            <p>
              <a href="/demo">Start again</a>
            </p>
          </DemoPage>
        )
      },
      {
        query: t.Object({ code: t.Optional(t.String({ maxLength: 512 })), state: t.Optional(t.String({ maxLength: 512 })) }),
        detail: { hide: true },
      },
    )
}

function DemoPage({ title, children }: PropsWithChildren<{ title: string }>) {
  return (
    <Layout lang="en" title={title}>
      <h1 safe>{title}</h1>
      {children}
    </Layout>
  )
}

function DemoProblem({ message }: { message: string }) {
  return (
    <DemoPage title="Something went wrong · ofage demo shop">
      <div role="alert" class="alert">
        <p safe>{message}</p>
      </div>
      <p>
        <a href="/demo">Start again</a>
      </p>
    </DemoPage>
  )
}
