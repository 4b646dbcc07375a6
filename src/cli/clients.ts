import type { Services } from '../boot.ts'
import { OAuthError } from '../errors.ts'
import { readDuration } from '../lib/duration.ts'
import { createClient, findClient, listClients, updateClient } from '../clients/registry.ts'
import { describeClient, type Client, type ClientChanges } from '../clients/model.ts'
import { rotateClientSecret } from '../clients/secrets.ts'
import { deleteClient } from '../clients/delete-client.ts'
import { describeGate, readGateOrigin, readGateSettings, updateGate, type GateChanges, type GateSettings } from '../gate/gate-settings.ts'
import { gateAgeOf, gateCallbackUri, listGateHostsByClient } from '../gate/gate-hosts.ts'
import { describeBranding, findLogoVersion, listLogoVersions, removeClientLogo, setClientLogo, updateBranding } from '../branding/branding.ts'
import { readLogoFile } from '../branding/logo-file.ts'
import { databaseCommand, jsonOption, type Flags } from './command.ts'
import { formatFields, formatTable, type Output } from './output.ts'
import { UsageError } from './parse.ts'

const options = {
  ...jsonOption,
  name: { type: 'string' },
  'redirect-uri': { type: 'string', multiple: true },
  'add-redirect-uri': { type: 'string', multiple: true },
  'remove-redirect-uri': { type: 'string', multiple: true },
  'min-age': { type: 'string' },
  limit: { type: 'string' },
  'face-buffer': { type: 'string' },
  methods: { type: 'string' },
  'home-url': { type: 'string' },
  sandbox: { type: 'boolean' },
  'require-pkce': { type: 'string' },
  'require-par': { type: 'string' },
  force: { type: 'boolean' },
  overlap: { type: 'string' },
  'gate-host': { type: 'string', multiple: true },
  'remove-gate-host': { type: 'string', multiple: true },
  'gate-age': { type: 'string' },
  'gate-ttl': { type: 'string' },
  'display-name': { type: 'string' },
  'accent-colour': { type: 'string' },
  'privacy-url': { type: 'string' },
  logo: { type: 'string' },
} as const

type ClientFlags = Flags<typeof options>

const usage = `clients create --name NAME --redirect-uri URI [--redirect-uri URI …]
                 [--min-age N] [--limit N] [--face-buffer N] [--home-url URL] [--sandbox]
                 [--require-pkce on|off] [--require-par on|off]
                 [--methods face,credential,passkey,age_pass]   the ways it accepts (default all)
                 [--gate-host HOST …] [--gate-age N] [--gate-ttl 30d]   gate sites (docs/gate.md);
                                          a gate host needs no --redirect-uri
  clients list | show ID | suspend ID | activate ID
  clients rotate-secret ID [--overlap 0|90m|24h|7d]   the old secret keeps working this long (default 0)
  clients update ID [--name NAME] [--limit N|none] [--min-age N|none] [--face-buffer N|none]
                    [--home-url URL|none] [--add-redirect-uri URI] [--remove-redirect-uri URI]
                    [--require-pkce on|off] [--require-par on|off] [--methods LIST]
                    [--gate-host HOST] [--remove-gate-host HOST] [--gate-age N|none] [--gate-ttl 30d]
                    [--display-name NAME|none] [--accent-colour '#rrggbb'|none] [--privacy-url URL|none]
                    [--logo FILE|none]   the site's look on the hosted page (PNG, JPEG or WebP, 1 MiB)
  clients delete ID [--force]             with its audit rows, usage counters, webhooks, open codes
                                          and sessions, in one transaction; refused while it has
                                          verifications this month unless --force (suspend keeps them)`

/** `ofage clients …`: create, list, show, change and delete the sites that use the service (src/clients/). */
export const clients = databaseCommand({
  kind: 'database',
  name: 'clients',
  usage,
  subcommands: ['create', 'list', 'show', 'suspend', 'activate', 'rotate-secret', 'update', 'delete'],
  options,
  run: (services, { words: [sub, id], flags }) => runClients(services, sub, id, flags),
})

async function runClients(services: Services, sub: string | undefined, id: string | undefined, flags: ClientFlags): Promise<Output> {
  const { deps } = services
  if (sub === 'create') {
    if (!flags.name) throw new UsageError('clients create needs --name NAME')
    const gate = readGateFlags(flags)
    // A site gated without a developer has no redirect URI of its own: its gate's callback is one.
    const gateCallbacks = (gate.addHosts ?? []).map((host) => gateCallbackUri(readGateOrigin(host)))
    const { client, secret } = await createClient({ ...deps, deploymentFaceBuffer: deps.config.face.buffer }, {
      name: flags.name,
      redirectUris: [...(flags['redirect-uri'] ?? []), ...gateCallbacks],
      minAge: readOptionalInt('--min-age', flags['min-age']),
      verificationLimit: readOptionalInt('--limit', flags.limit),
      faceBuffer: readOptionalInt('--face-buffer', flags['face-buffer']),
      ...(flags.methods !== undefined && { methods: flags.methods.split(',') }),
      homeUrl: flags['home-url'],
      sandbox: flags.sandbox ?? false,
      requirePkce: readSwitch('--require-pkce', flags['require-pkce']),
      requirePushedRequests: readSwitch('--require-par', flags['require-par']),
    })
    if (!hasGateChanges(gate)) return withSecret(client, secret, await readGateSettings(deps.db, client))
    try {
      await updateGate(deps, client.id, gate)
    } catch (cause) {
      // Nothing half-made stays behind: the client goes with a gate the service refused.
      await deleteClient(deps.db, client.id, { now: deps.clock.now(), force: true })
      throw cause
    }
    const created = await requireClient(services, client.id)
    return withSecret(created, secret, await readGateSettings(deps.db, created))
  }
  if (sub === 'list') {
    const [gated, logos] = await Promise.all([listGateHostsByClient(deps.db), listLogoVersions(deps.db)])
    const json = (await listClients(deps.db)).map((client) => ({
      ...describeClient(client),
      ...describeGate({ hosts: gated.get(client.id) ?? [], age: gateAgeOf(client), ageIsSet: client.gateAge !== null, ttlSeconds: client.gateTtlSeconds }),
      ...describeBranding(client, logos.get(client.id)),
    }))
    const rows = json.map((c) => [c.client_id, c.status, c.sandbox ? 'yes' : 'no', c.verification_limit === null ? 'none' : String(c.verification_limit), c.created_at.slice(0, 10), c.name])
    const table = json.length
      ? formatTable(['CLIENT_ID', 'STATUS', 'SANDBOX', 'LIMIT', 'CREATED', 'NAME'], rows)
      : 'No clients yet. Create one with: ofage clients create --name NAME --redirect-uri URI'
    const cleartext = json.filter((c) => c.needs_https.length > 0)
    const warning = cleartext.length
      ? `\n\n${cleartext.length} live client${cleartext.length === 1 ? ' has' : 's have'} http addresses that need https (RFC 9700 §2.6; they work until changed):\n` +
        cleartext.map((c) => `  ${c.client_id}: ${c.needs_https.join(', ')}`).join('\n')
      : ''
    return { json, text: table + warning }
  }
  if (!id) throw new UsageError(`clients ${sub} needs a client id`)
  switch (sub) {
    case 'show':
      return showClient(services, await requireClient(services, id))
    case 'suspend':
    case 'activate':
      return showClient(services, await requireUpdate(services, id, { status: sub === 'suspend' ? 'suspended' : 'active' }))
    case 'rotate-secret': {
      const rotated = await rotateClientSecret(deps, id, { overlapSeconds: readDurationFlag('--overlap', flags.overlap) })
      if (!rotated) throw new OAuthError('invalid_request', `no client ${id}`)
      const output = withSecret(rotated.client, rotated.secret, await readGateSettings(deps.db, rotated.client))
      const until = rotated.client.previousSecretExpiresAt
      const previous = until ? `The previous secret keeps working until ${until.toISOString()}.` : 'The previous secret no longer works.'
      return { json: output.json, text: `${output.text}\n${previous}` }
    }
    case 'update': {
      const gate = readGateFlags(flags)
      await requireUpdate(services, id, {
          name: flags.name,
          minAge: readOptionalInt('--min-age', flags['min-age'], true),
          verificationLimit: readOptionalInt('--limit', flags.limit, true),
          faceBuffer: readOptionalInt('--face-buffer', flags['face-buffer'], true),
          ...(flags.methods !== undefined && { methods: flags.methods.split(',') }),
          homeUrl: flags['home-url'] === 'none' ? null : flags['home-url'],
          addRedirectUris: flags['add-redirect-uri'],
          removeRedirectUris: flags['remove-redirect-uri'],
          requirePkce: readSwitch('--require-pkce', flags['require-pkce']),
          requirePushedRequests: readSwitch('--require-par', flags['require-par']),
        })
      if (hasGateChanges(gate)) await updateGate(deps, id, gate)
      await updateLook(services, id, flags)
      return showClient(services, await requireClient(services, id))
    }
    case 'delete': {
      await requireClient(services, id)
      const deletion = await deleteClient(deps.db, id, { now: deps.clock.now(), force: flags.force })
      if (deletion.outcome === 'not_found') throw new OAuthError('invalid_request', `no client ${id}`)
      if (deletion.outcome === 'in_use') {
        throw new OAuthError(
          'invalid_request',
          `client ${id} has ${deletion.monthToDate} verification${deletion.monthToDate === 1 ? '' : 's'} this month: ` +
            'deleting it also deletes its audit rows and usage. Suspend it instead (clients suspend), or add --force',
        )
      }
      const json = { deleted: id, audit_rows_deleted: deletion.auditRows }
      return { json, text: `Deleted client ${id}, its ${deletion.auditRows} audit row${deletion.auditRows === 1 ? '' : 's'}, usage counters and webhook endpoints.` }
    }
    default:
      throw new UsageError(`unknown clients command "${sub}"`)
  }
}

/** The client, or the CLI's "no client" error. */
export async function requireClient(services: Services, id: string): Promise<Client> {
  const client = await findClient(services.deps.db, id)
  if (!client) throw new OAuthError('invalid_request', `no client ${id}`)
  return client
}

async function requireUpdate(services: Services, id: string, changes: ClientChanges): Promise<Client> {
  const client = await updateClient(services.deps.db, id, changes, { deploymentFaceBuffer: services.deps.config.face.buffer })
  if (!client) throw new OAuthError('invalid_request', `no client ${id}`)
  return client
}

async function showClient(services: Services, client: Client): Promise<Output> {
  const { db } = services.deps
  const json = { ...describeClient(client), ...describeGate(await readGateSettings(db, client)), ...describeBranding(client, await findLogoVersion(db, client.id)) }
  const logo = json.logo && `${json.logo.width}×${json.logo.height} PNG, sha256 ${json.logo.sha256}`
  return { json, text: `${formatFields({ ...withoutEmptyNeedsHttps(json), logo })}${cleartextWarning(json.needs_https)}` }
}

/** The site's look from `--display-name`, `--accent-colour`, `--privacy-url` and `--logo` (each `none` to clear); the logo file is read first. */
async function updateLook(services: Services, id: string, flags: ClientFlags): Promise<void> {
  const { deps } = services
  const logo = flags.logo === undefined || flags.logo === 'none' ? flags.logo : readLogoFile(flags.logo)
  const clear = (value: string | undefined) => (value === 'none' ? null : value)
  const changes = { displayName: clear(flags['display-name']), accentColour: clear(flags['accent-colour']), privacyUrl: clear(flags['privacy-url']) }
  if (Object.values(changes).some((value) => value !== undefined)) await updateBranding(deps.db, id, changes)
  if (logo === 'none') await removeClientLogo(deps.db, id)
  else if (logo) await setClientLogo(deps, id, logo)
}

function withSecret(client: Client, secret: string, gate: GateSettings): Output {
  const json = { ...describeClient(client), ...describeGate(gate), client_secret: secret }
  return { json, text: `${formatFields(withoutEmptyNeedsHttps(json))}${cleartextWarning(json.needs_https)}\n\nThe client secret is shown this once: store it in the client's backend now.` }
}

/** The text shows `needs_https` only when there is something to move; the JSON always has the list. */
function withoutEmptyNeedsHttps<T extends { needs_https: string[] }>(json: T): Omit<T, 'needs_https'> | T {
  if (json.needs_https.length > 0) return json
  const { needs_https: _, ...rest } = json
  return rest
}

function cleartextWarning(addresses: string[]): string {
  if (addresses.length === 0) return ''
  return (
    `\n\nWarning: this live client has http addresses, registered before https was required. They keep working, but codes and visitors ` +
    `travel over plain http (RFC 9700 §2.6): register the https address (clients update --add-redirect-uri / --home-url), then remove the http one.`
  )
}

/** Reads a duration in seconds: `N`, `Ns`, `Nm`, `Nh` or `Nd`; 0 when the flag is absent. */
function readDurationFlag(flag: string, value: string | undefined): number {
  if (value === undefined) return 0
  const seconds = readDuration(value)
  if (seconds === undefined) throw new UsageError(`${flag} must be a duration such as 3600, 90m, 24h or 7d`)
  return seconds
}

/** The gate flags of create and update (docs/gate.md). */
function readGateFlags(flags: ClientFlags): GateChanges {
  const ttl = flags['gate-ttl']
  const ttlSeconds = ttl === undefined ? undefined : readDuration(ttl)
  if (ttl !== undefined && ttlSeconds === undefined) throw new UsageError('--gate-ttl must be a duration such as 12h, 30d or 400d')
  return { addHosts: flags['gate-host'], removeHosts: flags['remove-gate-host'], age: readOptionalInt('--gate-age', flags['gate-age'], true), ttlSeconds }
}

function hasGateChanges(changes: GateChanges): boolean {
  return Object.values(changes).some((value) => value !== undefined)
}

/** Reads `N`, or `none` (null) where `allowNone`; undefined when the flag is absent. */
function readOptionalInt(flag: string, value: string | undefined, allowNone = false): number | null | undefined {
  if (value === undefined) return undefined
  if (allowNone && value === 'none') return null
  if (!/^\d+$/.test(value)) throw new UsageError(`${flag} must be a whole number${allowNone ? ' or "none"' : ''}`)
  return Number(value)
}

/** Reads `on` or `off`; undefined when the flag is absent. */
function readSwitch(flag: string, value: string | undefined): boolean | undefined {
  if (value === undefined) return undefined
  if (value !== 'on' && value !== 'off') throw new UsageError(`${flag} must be "on" or "off"`)
  return value === 'on'
}
