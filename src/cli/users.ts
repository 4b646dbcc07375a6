import type { Services } from '../boot.ts'
import { OAuthError } from '../errors.ts'
import { findClient } from '../clients/registry.ts'
import {
  createDashboardUser,
  describeDashboardUser,
  findDashboardUser,
  listDashboardUsers,
  passwordLinkUrl,
  removeDashboardUser,
  resetDashboardPassword,
  type DashboardUser,
  type PasswordLink,
} from '../dashboard/users.ts'
import { databaseCommand, jsonOption, type Flags } from './command.ts'
import { formatFields, formatTable, type Output } from './output.ts'
import { UsageError } from './parse.ts'

const usage = `users create --client ID --email EMAIL  a dashboard user of that client; prints
${' '.repeat(42)}a one-time set-password link (24 hours)
  users list [--client ID] | remove ID|EMAIL
  users reset-password ID|EMAIL           a new set-password link for an existing user; removes
${' '.repeat(42)}the account's passkeys and ends its sessions at once`

const options = { ...jsonOption, client: { type: 'string' }, email: { type: 'string' } } as const

/** `ofage users …`: the people who may sign in to a client's dashboard. */
export const users = databaseCommand({
  kind: 'database',
  name: 'users',
  usage,
  subcommands: ['create', 'list', 'remove', 'reset-password'],
  options,
  printsLinks: ['create', 'reset-password'],
  run: (services, { words: [sub, target], flags }) => runUsers(services, sub, target, flags),
})

async function runUsers(services: Services, sub: string | undefined, target: string | undefined, flags: Flags<typeof options>): Promise<Output> {
  const { deps } = services
  switch (sub) {
    case 'create': {
      if (!flags.client || !flags.email) throw new UsageError('usage: users create --client CLIENT_ID --email EMAIL')
      const { user, link } = await createDashboardUser(deps, { clientId: flags.client, email: flags.email })
      return withLink(deps.config.appUrl, user, link)
    }
    case 'list': {
      if (flags.client !== undefined && !(await findClient(deps.db, flags.client))) throw new OAuthError('invalid_request', `no client ${flags.client}`)
      const json = (await listDashboardUsers(deps.db, flags.client)).map(describeDashboardUser)
      const text = json.length
        ? formatTable(
            ['USER_ID', 'CLIENT_ID', 'PASSWORD', 'CREATED', 'EMAIL'],
            json.map((user) => [user.id, user.client_id, user.password_set ? 'set' : 'not set', user.created_at.slice(0, 10), user.email]),
          )
        : 'No dashboard users yet. Create one with: ofage users create --client CLIENT_ID --email EMAIL'
      return { json, text }
    }
    case 'remove': {
      if (!target) throw new UsageError('usage: users remove USER_ID|EMAIL')
      const user = await removeDashboardUser(deps.db, target)
      if (!user) throw new OAuthError('invalid_request', `no dashboard user ${target}`)
      return { json: { removed: user.id, email: user.email }, text: `Removed dashboard user ${user.id} (${user.email}) and signed them out everywhere.` }
    }
    case 'reset-password': {
      if (!target) throw new UsageError('usage: users reset-password USER_ID|EMAIL')
      const user = await findDashboardUser(deps.db, target)
      const reset = user && (await resetDashboardPassword(deps, user.id))
      if (!user || !reset) throw new OAuthError('invalid_request', `no dashboard user ${target}`)
      return withLink(deps.config.appUrl, user, reset.link, { passkeys_removed: reset.passkeysRemoved })
    }
    default:
      throw new UsageError(`unknown users command "${sub ?? ''}"`)
  }
}

function withLink(appUrl: string, user: DashboardUser, link: PasswordLink, extra: Record<string, unknown> = {}): Output {
  const json = { ...describeDashboardUser(user), ...extra, set_password_url: passwordLinkUrl(appUrl, link.token), set_password_expires_at: link.expiresAt.toISOString() }
  return {
    json,
    text: `${formatFields(json)}\n\nSend the link to the user: it sets their password, works once and expires at ${json.set_password_expires_at}. It is shown this once.`,
  }
}
