import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { OAuthError, ruleProblem, type RuleProblem } from '../errors.ts'
import { dashboardLanguages } from '../i18n/languages.ts'
import { constantTimeEqual } from '../lib/crypto.ts'
import type { DashboardMessages } from '../i18n/dashboard-messages.ts'
import type { Cookies } from '../web/cookies.ts'
import { LangQuery, readForm } from '../web/forms.ts'
import type { ResponseSet } from '../web/headers.ts'
import { decodeDeliveryCursor, encodeDeliveryCursor, findClientDelivery, listEndpointDeliveries } from '../webhooks/deliveries.ts'
import {
  addWebhookEndpoint,
  findClientEndpoint,
  listWebhookEndpoints,
  MAX_WEBHOOK_ENDPOINTS,
  removeWebhookEndpoint,
  replayDelivery,
  type WebhookEndpoint,
} from '../webhooks/endpoints.ts'
import { enqueueTestEvent, eventTypes } from '../webhooks/events.ts'
import type { DashboardContext } from './context.ts'
import { href, type View } from './layout.tsx'
import { createWebhookSecretCookie } from './webhook-secret-cookie.ts'
import type { SignedIn } from './sessions.ts'
import { WebhookEndpointPage } from './webhook-endpoint-page.tsx'
import { WebhooksPage, type WebhooksNotice, type WebhooksProblem } from './webhooks-page.tsx'

/** Deliveries per page of an endpoint's list. */
export const DELIVERY_PAGE_ROWS = 50

const hidden = { detail: { hide: true } }
const form = { parse: [readForm, 'urlencoded' as const] }
const field = (maxLength: number) => t.String({ maxLength })
const extra = { additionalProperties: t.String({ maxLength: 1024 }) }
const notices = ['endpoint_added', 'endpoint_removed', 'test_sent', 'replayed'] as const satisfies readonly WebhooksNotice[]
const Notice = t.Optional(t.Union(notices.map((notice) => t.Literal(notice))))

const WebhooksQuery = t.Object({ lang: t.Optional(t.String({ maxLength: 8 })), notice: Notice })
const EndpointQuery = t.Object({ lang: t.Optional(t.String({ maxLength: 8 })), notice: Notice, before: t.Optional(t.String({ maxLength: 120 })) })
const AddForm = t.Object({ csrf: field(128), url: field(2048), ...Object.fromEntries(eventTypes.map((type) => [`event_${type}`, t.Optional(t.Literal('on'))])) }, extra)
const EndpointForm = t.Object({ csrf: field(128), endpoint_id: field(128) }, extra)
const DeliveryForm = t.Object({ csrf: field(128), delivery_id: field(128) }, extra)

/**
 * The webhooks of the signed-in user's client: its endpoints, added (the signing secret shown once, carried
 * across the redirect in a sealed cookie: webhook-secret-cookie.ts) and removed; each endpoint's deliveries, a
 * test event, and the replay of a dead delivery, through the same services as `ofage webhooks`. Every
 * query is bound to the session's client: another client's endpoint or delivery is not found. Every form
 * is a post (CSRF token, same origin) answered with a redirect; a refused value re-renders with the reason (400).
 */
export function webhooksRoutes(deps: AppDeps, context: DashboardContext) {
  const { openPage, openPost, accountOf, page, redirect, viewOf } = context
  const newSecret = createWebhookSecretCookie(deps.config, deps.keys.dashboardKey)

  async function renderList(set: ResponseSet, view: View, session: SignedIn, extras: { notice?: WebhooksNotice | undefined; problem?: WebhooksProblem; added?: { endpointId: string; secret: string } } = {}) {
    const endpoints = await listWebhookEndpoints(deps.db, session.client.id)
    const endpoint = extras.added && endpoints.find((candidate) => candidate.id === extras.added!.endpointId)
    // Only the secret of an endpoint still there, and still its own (removed and added again is another id).
    const added = endpoint && constantTimeEqual(endpoint.secret, extras.added!.secret) ? { endpoint, secret: endpoint.secret } : undefined
    page(set, extras.problem ? 400 : 200)
    return <WebhooksPage view={view} account={accountOf(session)} endpoints={endpoints} notice={extras.notice} problem={extras.problem} added={added} />
  }

  async function renderEndpoint(set: ResponseSet, view: View, session: SignedIn, endpoint: WebhookEndpoint, extras: { notice?: WebhooksNotice | undefined; before?: string | undefined; problem?: string } = {}) {
    const before = extras.before === undefined ? undefined : decodeDeliveryCursor(extras.before)
    if (extras.before !== undefined && !before) throw new OAuthError('invalid_request', 'before is not a page cursor of this list')
    const { rows, next } = await listEndpointDeliveries(deps.db, { endpointId: endpoint.id, before, limit: DELIVERY_PAGE_ROWS })
    const path = `/dashboard/webhooks/${endpoint.id}`
    const cursor = (value: string) => `${path}?${new URLSearchParams({ before: value })}`
    page(set, extras.problem ? 400 : 200)
    return (
      <WebhookEndpointPage
        view={view}
        account={accountOf(session)}
        endpoint={endpoint}
        deliveries={rows}
        olderHref={next ? href(view, cursor(encodeDeliveryCursor(next))) : undefined}
        paged={before !== undefined}
        notice={extras.notice}
        problem={extras.problem}
        switchPath={extras.before ? cursor(extras.before) : path}
      />
    )
  }

  /** A webhooks form's post: its language, and the session (undefined: not signed in). */
  async function openForm(cookie: Cookies, request: Request, csrf: string, lang: string | undefined) {
    return { view: viewOf(request, lang), session: await openPost(cookie, request, csrf) }
  }

  /** This client's endpoint, or not found: an id of another client's reads exactly like one that does not exist. */
  async function ownEndpoint(session: SignedIn, endpointId: string): Promise<WebhookEndpoint> {
    const endpoint = await findClientEndpoint(deps.db, session.client.id, endpointId)
    if (!endpoint) throw new OAuthError('not_found', 'No such webhook endpoint')
    return endpoint
  }

  return new Elysia({ name: 'dashboard-webhooks-routes' })
    .get(
      '/dashboard/webhooks',
      async ({ query, request, cookie, set }) => {
        const { view, session } = await openPage(cookie, request, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const added = await newSecret.take(cookie, session.tokenHash, deps.clock.now())
        return renderList(set, view, session, { notice: query.notice, added })
      },
      { query: WebhooksQuery, ...hidden },
    )
    .get(
      '/dashboard/webhooks/:endpoint_id',
      async ({ params, query, request, cookie, set }) => {
        const { view, session } = await openPage(cookie, request, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        return renderEndpoint(set, view, session, await ownEndpoint(session, params.endpoint_id), { notice: query.notice, before: query.before })
      },
      { params: t.Object({ endpoint_id: field(128) }), query: EndpointQuery, ...hidden },
    )
    .post(
      '/dashboard/webhooks/add',
      async ({ query, body, request, cookie, set }) => {
        const { view, session } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const problems = dashboardLanguages[view.lang].webhooksPage.problems
        const fields = body as Record<string, string | undefined>
        const events = eventTypes.filter((type) => fields[`event_${type}`] === 'on')
        const refuse = (message: string) => renderList(set, view, session, { problem: { message, url: body.url, events } })
        if (events.length === 0) return refuse(problems.events)
        let endpoint: WebhookEndpoint
        try {
          endpoint = await addWebhookEndpoint(deps, session.client.id, { url: body.url, events })
        } catch (error) {
          const refused = ruleProblem(error)
          if (!refused) throw error
          return refuse(webhookProblem(problems, refused))
        }
        // Never the URL (it may carry the receiver's own token) and never the secret.
        deps.log.info('webhook_endpoint_added', { client_id: session.client.id, user_id: session.user.id, endpoint_id: endpoint.id })
        await newSecret.write(cookie, { endpointId: endpoint.id, secret: endpoint.secret, sessionTokenHash: session.tokenHash }, deps.clock.now())
        return redirect(set, view, '/dashboard/webhooks?notice=endpoint_added')
      },
      { ...form, body: AddForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/webhooks/remove',
      async ({ query, body, request, cookie, set }) => {
        const { view, session } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const endpoint = await ownEndpoint(session, body.endpoint_id)
        await removeWebhookEndpoint(deps.db, endpoint.id)
        deps.log.info('webhook_endpoint_removed', { client_id: session.client.id, user_id: session.user.id, endpoint_id: endpoint.id })
        return redirect(set, view, '/dashboard/webhooks?notice=endpoint_removed')
      },
      { ...form, body: EndpointForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/webhooks/test',
      async ({ query, body, request, cookie, set }) => {
        const { view, session } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const endpoint = await ownEndpoint(session, body.endpoint_id)
        const deliveryId = await enqueueTestEvent(deps.db, endpoint, deps.clock.now())
        deps.log.info('webhook_test_sent', { client_id: session.client.id, user_id: session.user.id, endpoint_id: endpoint.id, delivery_id: deliveryId })
        return redirect(set, view, `/dashboard/webhooks/${endpoint.id}?notice=test_sent`)
      },
      { ...form, body: EndpointForm, query: LangQuery, ...hidden },
    )
    .post(
      '/dashboard/webhooks/replay',
      async ({ query, body, request, cookie, set }) => {
        const { view, session } = await openForm(cookie, request, body.csrf, query.lang)
        if (!session) return redirect(set, view, '/dashboard/sign-in')
        const delivery = await findClientDelivery(deps.db, session.client.id, body.delivery_id)
        if (!delivery) throw new OAuthError('not_found', 'No such webhook delivery')
        // The service behind `ofage webhooks replay`: only a dead delivery, once, however many press the button.
        if (!(await replayDelivery(deps, delivery.id))) {
          return renderEndpoint(set, view, session, await ownEndpoint(session, delivery.endpointId), { problem: dashboardLanguages[view.lang].webhooksPage.problems.notDead })
        }
        deps.log.info('webhook_replayed', { client_id: session.client.id, user_id: session.user.id, delivery_id: delivery.id })
        return redirect(set, view, `/dashboard/webhooks/${delivery.endpointId}?notice=replayed`)
      },
      { ...form, body: DeliveryForm, query: LangQuery, ...hidden },
    )
}

/** What the page says of a rule's refusal of a new endpoint (src/webhooks/endpoints.ts), by its code. */
function webhookProblem(problems: DashboardMessages['webhooksPage']['problems'], problem: RuleProblem): string {
  switch (problem) {
    case 'url_cleartext':
      return problems.https
    case 'webhook_url_internal':
      return problems.internal
    case 'webhook_endpoint_known':
      return problems.known
    case 'webhook_endpoints_full':
      return problems.tooMany(MAX_WEBHOOK_ENDPOINTS)
    case 'webhook_event_unknown':
      return problems.events
    default:
      return problems.url
  }
}
