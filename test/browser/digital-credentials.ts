import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { BrowserContext } from 'playwright-core'
import { createDevIssuer, type DevIssuer } from '../../src/credentials/dev/issuer.ts'
import { createClient } from '../../src/clients/registry.ts'
import { startTestServer, type RunningServer } from './chromium.ts'

/**
 * A real server whose trust list holds a fresh development issuer, and a shop client returning to
 * `callback`. At localhost, not 127.0.0.1: a passkey needs a domain as its RP ID.
 */
export async function startCredentialServer(
  callback: string,
  more: { env?: Record<string, string>; estimator?: boolean } = {},
): Promise<{ running: RunningServer; issuer: DevIssuer; shop: { id: string; secret: string } }> {
  const issuer = await createDevIssuer(new Date())
  const dir = mkdtempSync(join(tmpdir(), 'ofage-trust-'))
  writeFileSync(join(dir, 'trust-list.pem'), issuer.rootCertificate)
  const running = await startTestServer({ ...more.env, CREDENTIAL_TRUST_LIST: join(dir, 'trust-list.pem') }, { hostname: 'localhost', estimator: more.estimator })
  const created = await createClient(running.services.deps, { name: 'Wine Shop', redirectUris: [callback] })
  return { running, issuer, shop: { id: created.client.id, secret: created.secret } }
}

/**
 * A stand-in for the browser's Digital Credentials API, installed before any page script runs: the page
 * calls `navigator.credentials.get({ digital: { requests } })` as it would in Safari or Chrome, the browser
 * part keeps the requests whose protocol it carries (as a real engine filters them), and the wallet (a
 * function of the test process, `answer`) picks one and answers it. The origin the wallet is told is the
 * page's own, as a browser asserts it; a test may make the wallet lie about it.
 */
export type BrowserProfile = {
  /** The protocols this "browser" carries, e.g. Safari 26: only `org-iso-mdoc`. */
  protocols: string[]
  /** Whether `DigitalCredential.userAgentAllowsProtocol` exists (newer engines) or the page must just try. */
  announcesProtocols: boolean
}

export type DigitalRequest = { protocol: string; data: unknown }

/** The wallet: the requests the browser passed on and the page's origin in, the credential's `{ protocol, data }` out; a string throws that DOMException name. */
export type WalletBehind = (requests: DigitalRequest[], origin: string) => Promise<DigitalRequest | string>

export const SAFARI_26: BrowserProfile = { protocols: ['org-iso-mdoc'], announcesProtocols: false }
export const CHROME_WITHOUT_MDOC: BrowserProfile = { protocols: ['openid4vp-v1-signed', 'openid4vp-v1-unsigned'], announcesProtocols: true }
export const EVERY_PROTOCOL: BrowserProfile = { protocols: ['org-iso-mdoc', 'openid4vp-v1-signed', 'openid4vp-v1-unsigned'], announcesProtocols: true }

/** Installs the API and the wallet behind it in every page of `context`; returns the requests each call carried. */
export async function installDigitalCredentials(context: BrowserContext, profile: BrowserProfile, wallet: WalletBehind): Promise<{ calls: DigitalRequest[][] }> {
  const calls: DigitalRequest[][] = []
  await context.exposeBinding('__ofageTestWallet', async ({ frame }, requests: DigitalRequest[]) => {
    calls.push(requests)
    return wallet(requests, new URL(frame.url()).origin)
  })
  await context.addInitScript((browser: BrowserProfile) => {
    class DigitalCredential {
      constructor(
        readonly protocol: string,
        readonly data: unknown,
      ) {}
    }
    if (browser.announcesProtocols) {
      Object.defineProperty(DigitalCredential, 'userAgentAllowsProtocol', { value: (protocol: string) => browser.protocols.includes(protocol) })
    }
    Object.defineProperty(window, 'DigitalCredential', { value: DigitalCredential })
    const get = navigator.credentials.get.bind(navigator.credentials)
    navigator.credentials.get = async (options?: CredentialRequestOptions & { digital?: { requests?: DigitalRequest[] } }) => {
      if (!options?.digital) return get(options)
      // W3C Digital Credentials: requests in protocols the user agent does not carry are dropped; none left is a TypeError.
      const requests = (options.digital.requests ?? []).filter((request) => browser.protocols.includes(request.protocol))
      if (requests.length === 0) throw new TypeError('no request in a protocol this browser supports')
      const answer = (await (window as unknown as { __ofageTestWallet: (r: DigitalRequest[]) => Promise<DigitalRequest | string> }).__ofageTestWallet(requests))
      if (typeof answer === 'string') throw new DOMException('the wallet did not answer', answer)
      return new DigitalCredential(answer.protocol, answer.data) as unknown as Credential
    }
  }, profile)
  return { calls }
}
