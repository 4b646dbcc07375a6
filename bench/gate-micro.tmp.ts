import { Elysia } from 'elysia'
import { createTestContext } from '../test/helpers.ts'
import { updateGate } from '../src/gate/gate-settings.ts'
import { sealGatePass } from '../src/gate/gate-cookie.ts'
const ctx = await createTestContext()
const shop = await ctx.createClient({ name: 'Shop', sandbox: true })
await updateGate(ctx.deps, shop.id, { addHosts: ['shop.example'] })
const now = Math.floor(ctx.clock.now().getTime() / 1000)
const cookie = `__Host-ofage_gate=${sealGatePass(ctx.deps.keys.gateKey, { clientId: shop.id, origin: 'https://shop.example', ageOver: 18, verificationId: crypto.randomUUID(), issuedAt: now, expiresAt: now + 3600 })}`
const hello = new Elysia().get('/', () => ({ hello: 'world' }))
async function time(name: string, make: () => Request, handle: (r: Request) => Promise<Response> | Response, n = 20000) {
  for (let i = 0; i < 2000; i++) await handle(make())
  const t = performance.now()
  for (let i = 0; i < n; i++) await handle(make())
  console.log(name, ((performance.now() - t) * 1000 / n).toFixed(1), 'µs/req')
}
await time('hello', () => new Request('http://x/'), (r) => hello.handle(r))
await time('jwks handle', () => new Request('http://api.ofage.test/api/.well-known/jwks.json'), ctx.handle)
await time('gate handle', () => new Request('http://api.ofage.test/gate/auth', { headers: { 'x-forwarded-host': 'shop.example', cookie } }), ctx.handle)
await time('gate app only', () => new Request('http://api.ofage.test/gate/auth', { headers: { 'x-forwarded-host': 'shop.example', cookie } }), (r) => ctx.app.handle(r))
await time('jwks app only', () => new Request('http://api.ofage.test/api/.well-known/jwks.json'), (r) => ctx.app.handle(r))
const { checkGateRequest } = await import('../src/gate/gate-check.ts')
await time('checkGateRequest', () => new Request('http://x/'), async () => { await checkGateRequest(ctx.deps, { host: 'shop.example', cookie }); return new Response() })
const { openGatePass } = await import('../src/gate/gate-cookie.ts')
const v = cookie.slice(cookie.indexOf('=') + 1)
await time('openGatePass', () => new Request('http://x/'), () => { openGatePass(ctx.deps.keys.gateKey, v); return new Response() })
await time('find', () => new Request('http://x/'), async () => { await ctx.deps.gate.find('shop.example'); return new Response() })
await time('metric inc', () => new Request('http://x/'), () => { ctx.deps.metrics.gateChecks.inc({ outcome: 'pass' }); return new Response() })
const r = await ctx.handle(new Request('http://api.ofage.test/gate/auth', { headers: { 'x-forwarded-host': 'shop.example', cookie } }))
console.log(r.status)
await ctx.close()
