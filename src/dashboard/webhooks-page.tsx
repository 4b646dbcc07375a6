import { dashboardLanguages } from '../i18n/languages.ts'
import type { WebhookEndpoint } from '../webhooks/endpoints.ts'
import { eventTypes } from '../webhooks/events.ts'
import { formatInstant } from './audit-page.tsx'
import { DashboardLayout, href, RemoveForm, type Account, type View } from './layout.tsx'
import { Problem } from './settings-page.tsx'

export type WebhooksNotice = 'endpoint_added' | 'endpoint_removed' | 'test_sent' | 'replayed'
/** A refused form: what to say, and what the user typed (shown again). */
export type WebhooksProblem = { message: string; url?: string; events?: readonly string[] }
/** An endpoint just added, with its signing secret: shown on this one page view, never again. */
export type AddedEndpoint = { endpoint: WebhookEndpoint; secret: string }

type WebhooksPageProps = {
  view: View
  account: Account
  endpoints: WebhookEndpoint[]
  notice?: WebhooksNotice | undefined
  problem?: WebhooksProblem | undefined
  added?: AddedEndpoint | undefined
}

/** The client's webhook endpoints: the list, each with its page and a way to remove it, and the form that adds one. */
export function WebhooksPage({ view, account, endpoints, notice, problem, added }: WebhooksPageProps) {
  const t = dashboardLanguages[view.lang]
  const w = t.webhooksPage
  const ticked = problem?.events ?? eventTypes
  return (
    <DashboardLayout view={view} title={w.nav} account={account} switchPath="/dashboard/webhooks">
      <h1 safe>{w.nav}</h1>
      <p safe>{w.intro}</p>
      {notice && (
        <p role="status" class="notice" safe>
          {w.notices[notice]}
        </p>
      )}
      {added && (
        <section class="secret-box webhook-secret" aria-labelledby="new-secret-heading">
          <h2 id="new-secret-heading" safe>
            {w.secretHeading}
          </h2>
          <p safe>{w.secretShownOnce(added.endpoint.url)}</p>
          <p>
            <code class="mono secret" id="new-secret" data-endpoint-id={added.endpoint.id} safe>
              {added.secret}
            </code>
          </p>
        </section>
      )}
      <div class="table-wrap" role="region" aria-labelledby="endpoints-caption" tabindex="0">
        <table class="audit webhook-endpoints">
          <caption id="endpoints-caption" safe>
            {w.endpointsCaption}
          </caption>
          <thead>
            <tr>
              <th scope="col" safe>{w.columns.url}</th>
              <th scope="col" safe>{w.columns.events}</th>
              <th scope="col" safe>{w.columns.created}</th>
              <th scope="col" safe>{w.columns.action}</th>
            </tr>
          </thead>
          <tbody>
            {endpoints.length === 0 ? (
              <tr>
                <td colspan="4" safe>
                  {w.noEndpoints}
                </td>
              </tr>
            ) : (
              endpoints.map((endpoint) => (
                <tr data-endpoint-id={endpoint.id}>
                  <td class="mono">
                    <a href={href(view, `/dashboard/webhooks/${endpoint.id}`)} safe>
                      {endpoint.url}
                    </a>
                  </td>
                  <td class="mono" safe>{endpoint.events.join(', ')}</td>
                  <td>
                    <time datetime={endpoint.createdAt.toISOString()} safe>
                      {formatInstant(endpoint.createdAt)}
                    </time>
                  </td>
                  <td class="row-action">
                    <RemoveForm action={href(view, '/dashboard/webhooks/remove')} csrf={account.csrf} name="endpoint_id" value={endpoint.id} label={w.removeEndpoint(endpoint.url)} text={t.remove} />
                  </td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>

      <h2 id="add-heading" safe>
        {w.addHeading}
      </h2>
      {problem && <Problem id="add-problem" message={problem.message} />}
      <form method="post" action={href(view, '/dashboard/webhooks/add')} class="stack settings-form" aria-labelledby="add-heading">
        <input type="hidden" name="csrf" value={account.csrf} />
        <label for="url" safe>
          {w.urlLabel}
        </label>
        <input
          id="url"
          name="url"
          type="url"
          required
          maxlength="2048"
          spellcheck="false"
          autocomplete="off"
          placeholder="https://"
          value={problem?.url ?? ''}
          aria-describedby={problem ? 'url-help add-problem' : 'url-help'}
          {...(problem ? { 'aria-invalid': 'true' } : {})}
        />
        <p id="url-help" class="small" safe>
          {w.urlHelp}
        </p>
        <fieldset class="webhook-events">
          <legend safe>{w.eventsLegend}</legend>
          {eventTypes.map((type) => (
            <div class="check">
              <input id={`event_${type}`} name={`event_${type}`} type="checkbox" value="on" checked={ticked.includes(type)} />
              <label for={`event_${type}`}>
                <span class="mono" safe>
                  {type}
                </span>
                <br />
                <span class="small" safe>
                  {w.eventNames[type]}
                </span>
              </label>
            </div>
          ))}
        </fieldset>
        <div class="actions">
          <button type="submit" safe>
            {w.add}
          </button>
        </div>
      </form>
    </DashboardLayout>
  )
}
