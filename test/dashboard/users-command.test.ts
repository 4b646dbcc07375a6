import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { HELP, parseCommandLine } from '../../src/cli/commands.ts'
import { runCommand } from '../../src/cli/run.ts'
import { createTestContext, PUBLIC_URL, type TestContext } from '../helpers.ts'
import { readPage, testBrowser } from '../verification/browser.ts'
import { signedIn } from './dashboard.ts'

/** `ofage users …`: an operator creates, lists and removes dashboard users (issue 13). */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>
let other: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext()
  shop = await ctx.createClient({ name: 'Shop' })
  other = await ctx.createClient({ name: 'Other' })
}, 60_000)
afterAll(() => ctx.close())

async function cli(...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const status = await runCommand({ deps: ctx.deps, close: async () => {} }, argv, { out: (text) => out.push(text), err: (text) => err.push(text) })
  return { status, out: out.join('\n'), err: err.join('\n'), json: () => JSON.parse(out.join('\n')) }
}

/** Sets a password through a link the CLI printed, as the user's browser would; a dead link's page is answered as it is. */
async function usePasswordLink(url: string, password: string) {
  expect(url.startsWith(`${PUBLIC_URL}/dashboard/set-password?token=`)).toBe(true)
  const browser = testBrowser(ctx)
  const path = url.slice(PUBLIC_URL.length)
  const opened = await browser.request(path)
  if (opened.status !== 200) return opened
  const form = await readPage(opened)
  const token = new URL(url).searchParams.get('token')!
  return browser.post('/dashboard/set-password', { csrf: form.csrf!, token, password, confirm: password })
}

describe('ofage users', () => {
  test('create prints a one-time set-password link under APP_URL; the link works once and the user can sign in', async () => {
    const created = await cli('users', 'create', '--client', shop.id, '--email', 'Owner@Shop.example')
    expect(created.status).toBe(0)
    expect(created.out).toContain('set_password_url: http://api.ofage.test/dashboard/set-password?token=')
    expect(created.out).toContain('works once')
    const json = (await cli('users', 'reset-password', 'owner@shop.example', '--json')).json()
    expect(json).toMatchObject({ client_id: shop.id, email: 'Owner@Shop.example', password_set: false, set_password_expires_at: '2026-11-23T12:00:00.000Z' })
    // The link printed first was replaced by the reset's.
    const first = /set_password_url: (\S+)/.exec(created.out)![1]!
    expect((await usePasswordLink(first, 'the first link is dead')).status).toBe(400)
    expect((await usePasswordLink(json.set_password_url, 'a passphrase of words')).status).toBe(303)
    expect((await usePasswordLink(json.set_password_url, 'a passphrase of words')).status).toBe(400)
    expect((await (await signedIn(ctx, 'owner@shop.example', 'a passphrase of words')).request('/dashboard/audit')).status).toBe(200)
  })

  test('create refuses an unknown client, a second user with the same email in any case, and a malformed email', async () => {
    expect(await cli('users', 'create', '--client', 'cl_nope', '--email', 'x@shop.example')).toMatchObject({ status: 1, err: 'ofage: no client cl_nope' })
    expect((await cli('users', 'create', '--client', shop.id, '--email', 'dup@shop.example')).status).toBe(0)
    expect(await cli('users', 'create', '--client', other.id, '--email', 'DUP@shop.example')).toMatchObject({ status: 1, err: 'ofage: a dashboard user with the email DUP@shop.example exists already' })
    expect((await cli('users', 'create', '--client', shop.id, '--email', 'not an email')).status).toBe(1)
    expect(await cli('users', 'create', '--client', shop.id)).toMatchObject({ status: 2, err: expect.stringContaining('usage: users create --client CLIENT_ID --email EMAIL') })
  })

  test('list has a header line, filters by client, and never shows a hash', async () => {
    await cli('users', 'create', '--client', other.id, '--email', 'someone@other.example')
    const all = await cli('users', 'list')
    expect(all.status).toBe(0)
    expect(all.out.split('\n')[0]).toMatch(/^USER_ID\s+CLIENT_ID\s+PASSWORD\s+CREATED\s+EMAIL$/)
    expect(all.out).toContain('someone@other.example')
    const mine = (await cli('users', 'list', '--client', shop.id, '--json')).json() as { email: string; client_id: string }[]
    expect(mine.every((user) => user.client_id === shop.id)).toBe(true)
    expect(mine.map((user) => user.email)).toContain('Owner@Shop.example')
    expect(Object.keys(mine[0]!).sort()).toEqual(['client_id', 'created_at', 'email', 'id', 'password_set'])
    expect(all.out).not.toContain('$argon2')
    expect(await cli('users', 'list', '--client', 'cl_nope')).toMatchObject({ status: 1, err: 'ofage: no client cl_nope' })
  })

  test('remove by id or email deletes the user and signs them out everywhere', async () => {
    const { id, set_password_url } = (await cli('users', 'create', '--client', shop.id, '--email', 'leaving@shop.example', '--json')).json()
    await usePasswordLink(set_password_url, 'leaving soon, sadly')
    const browser = await signedIn(ctx, 'leaving@shop.example', 'leaving soon, sadly')
    expect(await cli('users', 'remove', 'LEAVING@shop.example')).toMatchObject({ status: 0, out: `Removed dashboard user ${id} (leaving@shop.example) and signed them out everywhere.` })
    expect((await browser.request('/dashboard/audit')).status).toBe(303)
    expect(await cli('users', 'remove', id)).toMatchObject({ status: 1, err: `ofage: no dashboard user ${id}` })
    const byId = (await cli('users', 'create', '--client', shop.id, '--email', 'byid@shop.example', '--json')).json()
    expect((await cli('users', 'remove', byId.id, '--json')).json()).toEqual({ removed: byId.id, email: 'byid@shop.example' })
  })

  test('deleting a client deletes its dashboard users', async () => {
    const doomed = await ctx.createClient({ name: 'Doomed' })
    await cli('users', 'create', '--client', doomed.id, '--email', 'doomed@shop.example')
    expect((await cli('clients', 'delete', doomed.id)).status).toBe(0)
    expect((await cli('users', 'list', '--json')).json().some((user: { email: string }) => user.email === 'doomed@shop.example')).toBe(false)
  })

  test('unknown subcommands and options are usage errors with a hint; --help lists the commands', async () => {
    expect(() => parseCommandLine(['users', 'crate'])).toThrow('unknown users command "crate" (did you mean "create"?)')
    expect(() => parseCommandLine(['users', 'create', '--client', 'x', '--emial', 'y'])).toThrow('unknown option --emial (did you mean "--email"?)')
    expect(() => parseCommandLine(['users'])).toThrow('users needs a command: create, list, remove, reset-password')
    expect((await cli('users', 'list', '--bogus')).status).toBe(2)
    expect(HELP).toContain('users create --client ID --email EMAIL')
    expect(HELP).toContain('users reset-password ID|EMAIL')
  })
})
