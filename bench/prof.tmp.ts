import { createTestContext } from '../test/helpers.ts'
import { updateGate } from '../src/gate/gate-settings.ts'
import { sealGatePass } from '../src/gate/gate-cookie.ts'
const ctx = await createTestContext()
const shop = await ctx.createClient({ name: 'Shop', sandbox: true })
await updateGate(ctx.deps, shop.id, { addHosts: ['shop.example'] })
const now = Math.floor(ctx.clock.now().getTime() / 1000)
const cookie = `__Host-ofage_gate=${sealGatePass(ctx.deps.keys.gateKey, { clientId: shop.id, origin: 'https://shop.example', ageOver: 18, verificationId: crypto.randomUUID(), issuedAt: now, expiresAt: now + 3600 })}`
const mk = () => new Request('http://api.ofage.test/gate/auth', { headers: { 'x-forwarded-host': 'shop.example', cookie, 'user-agent': 'wrk', accept: '*/*' } })
for (let i = 0; i < 20000; i++) await ctx.app.handle(mk())
let t = performance.now()
for (let i = 0; i < 100000; i++) await ctx.app.handle(mk())
console.log('gate app', ((performance.now() - t) * 10).toFixed(2), 'µs')
const mk2 = () => new Request('http://api.ofage.test/api/.well-known/jwks.json', { headers: { 'user-agent': 'wrk', accept: '*/*' } })
for (let i = 0; i < 20000; i++) await ctx.app.handle(mk2())
t = performance.now()
for (let i = 0; i < 100000; i++) await ctx.app.handle(mk2())
console.log('jwks app', ((performance.now() - t) * 10).toFixed(2), 'µs')
await ctx.close()
