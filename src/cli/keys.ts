import type { Services } from '../boot.ts'
import { listInstances, type InstanceReport } from '../keys/instance-reports.ts'
import { readStoredKeys, type KeyInForce } from '../keys/key-in-force.ts'
import { describeKeySource } from '../keys/key-source.ts'
import { rotateSigningKey } from '../keys/rotate-key.ts'
import { publicKeyFromJwk } from '../keys/signing-key.ts'
import { databaseCommand, jsonOption, type Flags } from './command.ts'
import type { Output } from './output.ts'
import { UsageError } from './parse.ts'

/** How long `keys rotate` waits for the running instances to say they switched. */
const SETTLE_MS = 5_000

const options = { ...jsonOption, file: { type: 'string' }, leaked: { type: 'boolean' } } as const

/**
 * `ofage keys show`: the key in force, as every instance publishes it (from the database, never from
 * this shell's SIGNING_KEY_FILE), the key it replaced while our validation still accepts it, and whether
 * the running instances all sign with it. `ofage keys rotate`: rotate-key.ts, then the instances' answers.
 */
export const keys = databaseCommand({
  kind: 'database',
  name: 'keys',
  usage: `keys show                               the key in force (every instance signs with it and publishes
                                          it), where it comes from, and whether the running instances agree
  keys rotate [--file PATH] [--leaked]    a new key for every instance at once: generated and kept in the
                                          database, or the one every SIGNING_KEY_FILE already holds (PATH);
                                          the old key is still accepted by validation for 630 s, unless
                                          --leaked (docs/deploy.md, Keys)`,
  subcommands: ['show', 'rotate'],
  options,
  // `keys show` never generates the signing key: it shows the one the server has, or says there is none.
  generatesSigningKey: false,
  run: (services, { words: [sub], flags }) => runKeys(services, sub, flags),
})

async function runKeys(services: Services, sub: string | undefined, flags: Flags<typeof options>): Promise<Output> {
  const { deps } = services
  if (sub === 'show') {
    if (flags.file !== undefined || flags.leaked) throw new UsageError('keys show takes no --file or --leaked')
    return describeKeys(services, await listInstances(deps.db, deps.clock.now()))
  }
  if (sub !== 'rotate') throw new UsageError('usage: keys show | keys rotate [--file PATH] [--leaked]')
  const record = await rotateSigningKey(deps.db, { file: flags.file, leaked: flags.leaked ?? false, now: deps.clock.now() })
  // This process may be a running server (the embedded store's admin socket): it follows at once.
  await deps.keys.signing.refresh()
  return describeKeys(services, await settled(services, record))
}

/** The instances' reports, once each says it signs with the new key or cannot (or after 5 s). */
async function settled({ deps }: Services, record: KeyInForce): Promise<InstanceReport[]> {
  const deadline = performance.now() + SETTLE_MS
  for (;;) {
    const instances = await listInstances(deps.db, deps.clock.now())
    if (instances.every((i) => !i.signing || i.key === record.thumbprint) || performance.now() > deadline) return instances
    await Bun.sleep(50)
  }
}

async function describeKeys({ deps }: Services, instances: InstanceReport[]): Promise<Output> {
  const stored = await readStoredKeys(deps.db)
  const { inForce } = stored
  const key = inForce ? await publicKeyFromJwk(inForce) : await deps.keys.signing.published()
  const now = deps.clock.now().getTime()
  const previous = inForce?.previous && Date.parse(inForce.previous.until) > now ? { thumbprint: inForce.previous.thumbprint, accepted_until: inForce.previous.until } : null
  const report = instances.map((i) => ({ host: i.host, pid: i.pid, source: i.source, key: i.key, signing: i.signing && i.key === key.thumbprint, seen_at: i.seenAt.toISOString() }))
  const json = {
    kid: key.jwk.kid,
    alg: key.jwk.alg,
    thumbprint: key.thumbprint,
    source: describeKeySource(deps.config, stored),
    in_force_since: inForce?.since ?? null,
    previous,
    instances: report,
    instances_agree: report.every((i) => i.signing),
    public_key: key.publicPem,
    jwk: key.jwk,
  }
  const lines = [
    `kid: ${json.kid}`,
    `alg: ${json.alg}`,
    `thumbprint: ${json.thumbprint}`,
    `source: ${json.source}`,
    `in force since: ${json.in_force_since ?? 'not yet: no server has started on this database; the first one puts its own key in force'}`,
    ...(previous ? [`previous key: ${previous.thumbprint}, still accepted by /api/verify/token and /api/oauth/validate until ${previous.accepted_until}`] : []),
    `instances: ${describeInstances(report)}`,
    ...report.map((i) => `  ${i.host} pid ${i.pid}: ${i.signing ? 'signs with this key' : `NOT SIGNING (holds ${i.key ?? 'no key'}, ${i.source === 'file' ? 'from SIGNING_KEY_FILE' : 'from the database'})`}, seen ${i.seen_at}`),
  ]
  return { json, text: `${lines.join('\n')}\n${json.public_key}` }
}

function describeInstances(report: { signing: boolean }[]): string {
  if (report.length === 0) return 'none seen in the last 90 s'
  const signing = report.filter((i) => i.signing).length
  return signing === report.length ? `all ${report.length} seen in the last 90 s sign with this key` : `${report.length - signing} of ${report.length} do not sign with this key`
}
