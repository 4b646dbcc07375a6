import type { Services } from '../boot.ts'
import { OAuthError } from '../errors.ts'
import { importTrustSource, listTrustSources, refreshTrustSources, removeTrustSource, type TrustSourceSummary } from '../credentials/trust/trust-sources.ts'
import { databaseCommand, jsonOption, type Flags } from './command.ts'
import { formatFields, type Output } from './output.ts'
import { UsageError } from './parse.ts'

const usage = `trust import --vical FILE|URL | --etsi-tl FILE|URL   a signed list of issuers' roots, verified
                                          against CREDENTIAL_VICAL_SIGNER_FILE / _TRUSTED_LIST_SIGNER_FILE
  trust list | remove SOURCE_ID | refresh   refresh: read every imported list again now`

const options = { ...jsonOption, vical: { type: 'string' }, 'etsi-tl': { type: 'string' } } as const

/**
 * `ofage trust …`: the published lists whose roots the digital ID method trusts beside CREDENTIAL_TRUST_LIST.
 * Every change is in force on every instance as soon as it commits; a list that fails a check changes nothing.
 */
export const trust = databaseCommand({
  kind: 'database',
  name: 'trust',
  usage,
  subcommands: ['import', 'list', 'remove', 'refresh'],
  options,
  run: (services, { words: [sub, id], flags }) => runTrust(services, sub, id, flags),
})

async function runTrust(services: Services, sub: string | undefined, id: string | undefined, flags: Flags<typeof options>): Promise<Output> {
  const { deps } = services
  switch (sub) {
    case 'import': {
      if ((flags.vical === undefined) === (flags['etsi-tl'] === undefined)) throw new UsageError('trust import needs one of --vical FILE|URL or --etsi-tl FILE|URL')
      const source = flags.vical !== undefined ? { kind: 'vical' as const, location: flags.vical } : { kind: 'etsi-tl' as const, location: flags['etsi-tl']! }
      const imported = await importTrustSource(deps, source)
      return { json: describe(imported), text: `Imported ${imported.id}: ${imported.anchors} roots from ${imported.publisher}, in force now.\n${formatFields(describe(imported))}` }
    }
    case 'list': {
      const json = (await listTrustSources(deps.db)).map(describe)
      const text = json.length
        ? json.map((s) => `${s.source_id}  ${s.kind}  ${s.anchors} roots  ${s.publisher}  refreshed ${s.refreshed_at}${s.last_error ? `  LAST REFRESH FAILED: ${s.last_error}` : ''}\n    ${s.location}`).join('\n')
        : 'No imported lists: only CREDENTIAL_TRUST_LIST is in force.'
      return { json, text }
    }
    case 'remove': {
      if (!id || !(await removeTrustSource(deps.db, id))) throw new OAuthError('invalid_request', `no imported list ${id ?? ''}`.trim())
      return { json: { removed: id }, text: `Removed ${id}: its roots are no longer trusted.` }
    }
    case 'refresh': {
      const results = await refreshTrustSources(deps, { all: true })
      const text = results.length
        ? results.map((r) => (r.refreshed ? `${r.id}  refreshed` : `${r.id}  kept the copy in force: ${r.error}`)).join('\n')
        : 'No imported lists to refresh.'
      return { json: results, text }
    }
    default:
      throw new UsageError(`usage: ${usage}`)
  }
}

function describe(source: TrustSourceSummary) {
  return {
    source_id: source.id,
    kind: source.kind,
    location: source.location,
    publisher: source.publisher,
    anchors: source.anchors,
    issued_at: source.issuedAt.toISOString(),
    sequence: source.sequence,
    next_update: source.nextUpdate?.toISOString() ?? null,
    refreshed_at: source.refreshedAt.toISOString(),
    last_error: source.lastError,
    last_error_at: source.lastErrorAt?.toISOString() ?? null,
  }
}

