import type { Services } from '../boot.ts'
import { OAuthError } from '../errors.ts'
import { addWebhookEndpoint, listDeadDeliveries, listWebhookEndpoints, removeWebhookEndpoint, replayDelivery } from '../webhooks/endpoints.ts'
import { databaseCommand, jsonOption, type Flags } from './command.ts'
import type { Output } from './output.ts'

const usage = `webhooks add CLIENT_ID --url URL [--event TYPE …] | list CLIENT_ID | remove ENDPOINT_ID
  webhooks dead [--client CLIENT_ID] | replay DELIVERY_ID`

const options = { ...jsonOption, url: { type: 'string' }, event: { type: 'string', multiple: true }, client: { type: 'string' } } as const

/**
 * `ofage webhooks …`: endpoints per client (the signing secret is shown once, at creation), and the
 * deliveries that gave up after the retry schedule, listed and sent again.
 */
export const webhooks = databaseCommand({
  kind: 'database',
  name: 'webhooks',
  usage,
  subcommands: ['add', 'list', 'remove', 'dead', 'replay'],
  options,
  run: (services, { words: [sub, id], flags }) => runWebhooks(services, sub, id, flags),
})

async function runWebhooks(services: Services, sub: string | undefined, id: string | undefined, flags: Flags<typeof options>): Promise<Output> {
  const { deps } = services
  switch (sub) {
    case 'add': {
      if (!id || !flags.url) throw new OAuthError('invalid_request', 'usage: webhooks add CLIENT_ID --url URL [--event TYPE …]')
      const endpoint = await addWebhookEndpoint(deps, id, { url: flags.url, events: flags.event })
      const json = { endpoint_id: endpoint.id, client_id: endpoint.clientId, url: endpoint.url, events: endpoint.events, secret: endpoint.secret }
      return { json, text: `${lines(json)}\n\nThe signing secret is shown this once: give it to the site's receiver now.` }
    }
    case 'list': {
      if (!id) throw new OAuthError('invalid_request', 'usage: webhooks list CLIENT_ID')
      const json = (await listWebhookEndpoints(deps.db, id)).map((endpoint) => ({ endpoint_id: endpoint.id, url: endpoint.url, events: endpoint.events, created_at: endpoint.createdAt.toISOString() }))
      return { json, text: json.length ? json.map((endpoint) => `${endpoint.endpoint_id}  ${endpoint.url}  ${endpoint.events.join(',')}`).join('\n') : `No webhook endpoints for ${id}.` }
    }
    case 'remove': {
      if (!id || !(await removeWebhookEndpoint(deps.db, id))) throw new OAuthError('invalid_request', `no webhook endpoint ${id ?? ''}`.trim())
      return { json: { removed: id }, text: `Removed ${id} and its pending deliveries.` }
    }
    case 'dead': {
      const json = (await listDeadDeliveries(deps.db, flags.client)).map((delivery) => ({
        delivery_id: delivery.id,
        client_id: delivery.clientId,
        url: delivery.url,
        event_type: delivery.eventType,
        attempts: delivery.attempts,
        last_status: delivery.lastStatus,
        last_error: delivery.lastError,
        dead_at: delivery.deadAt!.toISOString(),
      }))
      const text = json.length
        ? json.map((d) => `${d.delivery_id}  ${d.event_type}  ${d.url}  ${d.attempts} attempts, last ${d.last_status ?? d.last_error}`).join('\n')
        : 'No dead deliveries.'
      return { json, text }
    }
    case 'replay': {
      if (!id || !(await replayDelivery(deps, id))) throw new OAuthError('invalid_request', `no dead delivery ${id ?? ''}`.trim())
      return { json: { replayed: id }, text: `${id} will be sent again, with a fresh retry schedule.` }
    }
    default:
      throw new OAuthError('invalid_request', `usage: ${usage}`)
  }
}

function lines(record: Record<string, unknown>): string {
  return Object.entries(record)
    .map(([key, value]) => `${key}: ${Array.isArray(value) ? value.join(', ') : String(value)}`)
    .join('\n')
}
