import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import type { DevCredentialFormat, DevIssuer } from '../credentials/dev/issuer.ts'
import type { DevWallet } from '../credentials/dev/wallet.ts'
import type { Io, StandaloneCommand } from './command.ts'

const usage = `dev issuer init --dir DIR               a test issuer; DIR/trust-list.pem is its root
  dev issuer issue --dir DIR --age N --wallet FILE [--format sd-jwt|av|mdl]
  dev wallet present --wallet FILE 'openid4vp://…'|'av://…' [--decline]`

const options = {
  dir: { type: 'string' },
  age: { type: 'string' },
  wallet: { type: 'string' },
  format: { type: 'string' },
  decline: { type: 'boolean' },
} as const

/**
 * `ofage dev …`: the test issuer and test wallet, for integrators and tests to run the digital credential
 * flow without a phone. Refused in production: their keys sit in plain files.
 */
export const dev = {
  kind: 'standalone',
  name: 'dev',
  usage,
  subcommands: ['issuer', 'wallet'],
  options,
  run: (argv, { io, config }) => runDev(argv, io, config.production),
} satisfies StandaloneCommand<typeof options>

async function runDev(argv: string[], io: Io, production: boolean): Promise<number> {
  if (production) {
    io.err('ofage: the dev issuer and wallet are for development and tests only (NODE_ENV=production)')
    return 2
  }
  const refuse = (mistake?: string) => {
    io.err(`${mistake ? `ofage: ${mistake}\n` : ''}usage: ofage ${usage}`)
    return 2
  }
  let parsed
  try {
    parsed = parseArgs({ args: argv.slice(1), options, allowPositionals: true, strict: true })
  } catch (cause) {
    // Node's own message goes on about positionals after '--'; the option's name is what helps.
    const message = (cause as Error).message
    const unknown = /^Unknown option '([^']+)'/.exec(message)?.[1]
    return refuse(unknown ? `unknown option ${unknown}` : message)
  }
  const { values, positionals } = parsed
  const [tool, action, link] = positionals
  if (tool === 'issuer' && action === 'init' && typeof values.dir === 'string') {
    mkdirSync(values.dir, { recursive: true })
    // The test issuer and wallet (and their credential libraries) load only for these commands.
    const { createDevIssuer } = await import('../credentials/dev/issuer.ts')
    const issuer = await createDevIssuer(new Date())
    writeFileSync(join(values.dir, 'issuer.json'), JSON.stringify(issuer, null, 2), { mode: 0o600 })
    writeFileSync(join(values.dir, 'trust-list.pem'), issuer.rootCertificate)
    io.out(`test issuer written to ${values.dir}; trust it with CREDENTIAL_TRUST_LIST=${join(values.dir, 'trust-list.pem')}`)
    return 0
  }
  if (tool === 'issuer' && action === 'issue' && typeof values.dir === 'string' && typeof values.wallet === 'string') {
    const age = Number(values.age)
    const format = (values.format ?? 'sd-jwt') as DevCredentialFormat
    if (!Number.isInteger(age) || age < 1 || age > 120 || !['sd-jwt', 'av', 'mdl'].includes(format)) return refuse()
    const issuer = JSON.parse(readFileSync(join(values.dir, 'issuer.json'), 'utf8')) as DevIssuer
    const [{ issueDevCredential }, { createDevWallet }] = await Promise.all([import('../credentials/dev/issuer.ts'), import('../credentials/dev/wallet.ts')])
    const wallet: DevWallet = existsSync(values.wallet) ? JSON.parse(readFileSync(values.wallet, 'utf8')) : await createDevWallet()
    wallet.credentials.push(await issueDevCredential(issuer, { format, age, holderPublicKey: wallet.holder.publicKey, now: new Date() }))
    writeFileSync(values.wallet, JSON.stringify(wallet, null, 2), { mode: 0o600 })
    io.out(`issued a ${format} age credential (age ${age}) into ${values.wallet}`)
    return 0
  }
  if (tool === 'wallet' && action === 'present' && typeof values.wallet === 'string' && link) {
    const wallet = JSON.parse(readFileSync(values.wallet, 'utf8')) as DevWallet
    const { presentToVerifier } = await import('../credentials/dev/wallet.ts')
    const answer = await presentToVerifier(wallet, link, { decline: values.decline === true })
    io.out(`${answer.status} ${JSON.stringify(answer.body)}`)
    return answer.status === 200 ? 0 : 1
  }
  return refuse()
}
