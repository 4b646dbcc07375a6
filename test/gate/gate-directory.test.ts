import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import type { Database } from '../../src/db/client.ts'
import { clients, gateHosts } from '../../src/db/schema.ts'
import { checkGateRequest } from '../../src/gate/gate-check.ts'
import { GateDirectory } from '../../src/gate/gate-directory.ts'
import type { GateHost } from '../../src/gate/gate-hosts.ts'
import type { GateMatch } from '../../src/gate/gate-match.ts'
import { updateGate } from '../../src/gate/gate-settings.ts'
import { fixedClock } from '../../src/lib/clock.ts'
import { sealGatePass } from '../../src/gate/gate-cookie.ts'
import { createTestContext, type TestContext } from '../helpers.ts'

/**
 * Each instance's copy of the gated hosts (docs/decisions.md, "A valid cookie costs no database work"): a
 * valid cookie is checked without a query while the copy is fresh; a change announced by the database's
 * trigger, or 30 s, makes the next check read again; hosts that cannot be read are a 503, never a pass.
 */
let ctx: TestContext
let shop: Awaited<ReturnType<TestContext['createClient']>>

beforeAll(async () => {
  ctx = await createTestContext()
  shop = await ctx.createClient({ name: 'Shop', sandbox: true })
  await updateGate(ctx.deps, shop.id, { addHosts: ['shop.example'] })
})
afterAll(() => ctx.close())

/** A request as the documented proxy configurations ask about it: the client they name, scheme and host. */
const asked = () => ({ host: 'shop.example:443', proto: 'https', clientId: shop.id })
const hostOf = (match: GateMatch<GateHost>) => (match.outcome === 'found' ? match.host : undefined)

/** The real database, counting the reads a directory makes and failing them on demand. */
function watchedDatabase() {
  const state = { reads: 0, broken: false }
  const db = new Proxy(ctx.deps.db, {
    get(target, property, receiver) {
      if (property !== 'select') return Reflect.get(target, property, receiver)
      return (...args: unknown[]) => {
        state.reads++
        if (state.broken) throw new Error('connection refused')
        return (target.select as (...a: unknown[]) => unknown)(...args)
      }
    },
  }) as Database
  return { db, state }
}

describe('the gate directory', () => {
  test('a thousand checks of a valid cookie read the database once; 30 s later, once more', async () => {
    const clock = fixedClock(ctx.clock.now())
    const { db, state } = watchedDatabase()
    const directory = new GateDirectory(db, clock)
    const now = Math.floor(clock.now().getTime() / 1000)
    const cookie = `__Host-ofage_gate=${sealGatePass(ctx.deps.keys.gateKey, { clientId: shop.id, origin: 'https://shop.example', ageOver: 18, verificationId: 'v', issuedAt: now, expiresAt: now + 3600 })}`
    const deps = { gate: directory, keys: ctx.deps.keys, clock }
    for (let i = 0; i < 1000; i++) expect((await checkGateRequest(deps, { ...asked(), cookie })).outcome).toBe('pass')
    expect(state.reads).toBe(1)
    clock.advance(29_000)
    await checkGateRequest(deps, { ...asked(), cookie })
    expect(state.reads).toBe(1)
    clock.advance(2000)
    await checkGateRequest(deps, { ...asked(), cookie })
    expect(state.reads).toBe(2)
  })

  test('concurrent checks on a cold copy share one read', async () => {
    const { db, state } = watchedDatabase()
    const directory = new GateDirectory(db, ctx.clock)
    await Promise.all(Array.from({ length: 50 }, () => directory.find(asked())))
    expect(state.reads).toBe(1)
  })

  test("a change to a client or its hosts is announced by the database's trigger and read at the next check (the clock is frozen: no 30 s expiry)", async () => {
    const directory = ctx.deps.gate
    expect(hostOf(await directory.find(asked()))?.ageRequired).toBe(18)
    await updateGate(ctx.deps, shop.id, { age: 21 })
    for (let i = 0; i < 60 && hostOf(await directory.find(asked()))?.ageRequired !== 21; i++) await Bun.sleep(50)
    expect(hostOf(await directory.find(asked()))?.ageRequired).toBe(21)
    await ctx.deps.db.update(clients).set({ status: 'suspended' }).where(eq(clients.id, shop.id))
    for (let i = 0; i < 60 && hostOf(await directory.find(asked()))?.active !== false; i++) await Bun.sleep(50)
    expect(hostOf(await directory.find(asked()))?.active).toBe(false)
    await ctx.deps.db.delete(gateHosts).where(eq(gateHosts.clientId, shop.id))
    for (let i = 0; i < 60 && (await directory.find(asked())).outcome !== 'unknown_host'; i++) await Bun.sleep(50)
    expect((await directory.find(asked())).outcome).toBe('unknown_host')
    await ctx.deps.db.update(clients).set({ status: 'active', gateAge: null }).where(eq(clients.id, shop.id))
    await updateGate(ctx.deps, shop.id, { addHosts: ['shop.example'] })
  })

  test('hosts that cannot be read: the check says unavailable (503), never pass; it recovers by itself', async () => {
    const { db, state } = watchedDatabase()
    const directory = new GateDirectory(db, ctx.clock)
    const now = Math.floor(ctx.clock.now().getTime() / 1000)
    const cookie = `__Host-ofage_gate=${sealGatePass(ctx.deps.keys.gateKey, { clientId: shop.id, origin: 'https://shop.example', ageOver: 18, verificationId: 'v', issuedAt: now, expiresAt: now + 3600 })}`
    const deps = { gate: directory, keys: ctx.deps.keys, clock: ctx.clock }
    state.broken = true
    expect((await checkGateRequest(deps, { ...asked(), cookie })).outcome).toBe('unavailable')
    expect((await checkGateRequest(deps, { ...asked(), cookie: null })).outcome).toBe('unavailable')
    state.broken = false
    expect((await checkGateRequest(deps, { ...asked(), cookie })).outcome).toBe('pass')
  })
})
