import { dashboardLanguages } from '../i18n/languages.ts'
import { deliveryStatus } from '../webhooks/deliveries.ts'
import type { WebhookDelivery, WebhookEndpoint } from '../webhooks/endpoints.ts'
import { formatInstant } from './audit-page.tsx'
import { DashboardLayout, href, type Account, type View } from './layout.tsx'
import { Problem } from './settings-page.tsx'
import type { WebhooksNotice } from './webhooks-page.tsx'

type EndpointPageProps = {
  view: View
  account: Account
  endpoint: WebhookEndpoint
  deliveries: WebhookDelivery[]
  /** The next (older) page's address, when there is one; whether this page is past the first. */
  olderHref: string | undefined
  paged: boolean
  notice?: WebhooksNotice | undefined
  problem?: string | undefined
  switchPath: string
}

/**
 * One endpoint: what it is, a button that sends it a test event, and its deliveries newest first with
 * where each stands; a dead one can be replayed. What the receiver answered is shown, never a payload or
 * a signature.
 */
export function WebhookEndpointPage({ view, account, endpoint, deliveries, olderHref, paged, notice, problem, switchPath }: EndpointPageProps) {
  const t = dashboardLanguages[view.lang]
  const w = t.webhooksPage
  const count = new Intl.NumberFormat(view.lang)
  const self = href(view, `/dashboard/webhooks/${endpoint.id}`)
  return (
    <DashboardLayout view={view} title={w.endpointTitle} account={account} switchPath={switchPath}>
      <p>
        <a href={href(view, '/dashboard/webhooks')} safe>
          {w.backToEndpoints}
        </a>
      </p>
      <h1 safe>{w.endpointTitle}</h1>
      {notice && (
        <p role="status" class="notice" safe>
          {w.notices[notice]}
        </p>
      )}
      {problem && <Problem id="endpoint-problem" message={problem} />}
      <dl class="record">
        <dt safe>{w.endpointFields.url}</dt>
        <dd class="mono" safe>
          {endpoint.url}
        </dd>
        <dt safe>{w.endpointFields.events}</dt>
        <dd class="mono" safe>
          {endpoint.events.join(', ')}
        </dd>
        <dt safe>{w.endpointFields.created}</dt>
        <dd>
          <time datetime={endpoint.createdAt.toISOString()} safe>
            {formatInstant(endpoint.createdAt)}
          </time>
        </dd>
        <dt safe>{w.endpointFields.id}</dt>
        <dd class="mono" safe>
          {endpoint.id}
        </dd>
      </dl>
      <form method="post" action={href(view, '/dashboard/webhooks/test')} class="stack settings-form">
        <input type="hidden" name="csrf" value={account.csrf} />
        <input type="hidden" name="endpoint_id" value={endpoint.id} />
        <p id="test-help" class="small" safe>
          {w.testHelp}
        </p>
        <div class="actions">
          <button type="submit" aria-describedby="test-help" safe>
            {w.sendTest}
          </button>
        </div>
      </form>

      <h2 safe>{w.deliveriesHeading}</h2>
      <p safe>{w.deliveriesIntro}</p>
      <div class="table-wrap" role="region" aria-labelledby="deliveries-caption" tabindex="0">
        <table class="audit webhook-deliveries">
          <caption id="deliveries-caption" safe>
            {w.deliveriesCaption}
          </caption>
          <thead>
            <tr>
              <th scope="col" safe>{w.deliveryColumns.created}</th>
              <th scope="col" safe>{w.deliveryColumns.event}</th>
              <th scope="col" safe>{w.deliveryColumns.status}</th>
              <th scope="col" safe>{w.deliveryColumns.attempts}</th>
              <th scope="col" safe>{w.deliveryColumns.nextAttempt}</th>
              <th scope="col" safe>{w.deliveryColumns.lastAnswer}</th>
              <th scope="col" safe>{w.deliveryColumns.action}</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.length === 0 ? (
              <tr>
                <td colspan="7" safe>
                  {w.noDeliveries}
                </td>
              </tr>
            ) : (
              deliveries.map((delivery) => {
                const status = deliveryStatus(delivery)
                const waiting = status === 'pending' || status === 'failed'
                const created = formatInstant(delivery.createdAt)
                return (
                  <tr data-delivery-id={delivery.id} data-status={status}>
                    <td>
                      <time datetime={delivery.createdAt.toISOString()} safe>
                        {created}
                      </time>
                    </td>
                    <td class="mono" safe>{delivery.eventType}</td>
                    <td safe>{w.statuses[status]}</td>
                    <td>{count.format(delivery.attempts)}</td>
                    <td>
                      {waiting ? (
                        <time datetime={delivery.nextAttemptAt.toISOString()} safe>
                          {formatInstant(delivery.nextAttemptAt)}
                        </time>
                      ) : (
                        '–'
                      )}
                    </td>
                    <td class="mono last-answer" safe>
                      {lastAnswer(delivery)}
                    </td>
                    <td class="row-action">
                      {status === 'dead' && (
                        <form method="post" action={href(view, '/dashboard/webhooks/replay')}>
                          <input type="hidden" name="csrf" value={account.csrf} />
                          <input type="hidden" name="delivery_id" value={delivery.id} />
                          <button type="submit" class="secondary" aria-label={w.replayDelivery(created)} safe>
                            {w.replay}
                          </button>
                        </form>
                      )}
                    </td>
                  </tr>
                )
              })
            )}
          </tbody>
        </table>
      </div>
      <nav class="pager" aria-label={w.deliveriesCaption}>
        {paged && (
          <a href={self} safe>
            {w.newest}
          </a>
        )}
        {olderHref && (
          <a href={olderHref} rel="next" safe>
            {w.older}
          </a>
        )}
      </nav>
    </DashboardLayout>
  )
}

/**
 * The receiver's last answer: its HTTP status, or why nothing came back (the system's code and message,
 * with the endpoint's URL already cut out when it was recorded: src/webhooks/delivery.ts).
 */
function lastAnswer(delivery: WebhookDelivery): string {
  if (delivery.lastStatus !== null) return `HTTP ${delivery.lastStatus}`
  return delivery.lastError ?? '–'
}
