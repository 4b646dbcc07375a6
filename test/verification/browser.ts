import { PUBLIC_URL, REDIRECT_URI, type TestContext } from '../helpers.ts'

/**
 * A minimal browser over the app's handler, or over HTTP to a running server: keeps cookies, never
 * follows redirects, and reads the forms of the hosted page, so tests walk the page as a visitor does.
 */
export function testBrowser(target: TestContext | { baseUrl: string }) {
  const jar = new Map<string, string>()
  const send = 'handle' in target ? target.handle : (request: Request) => fetch(request, { redirect: 'manual' })
  const baseUrl = 'handle' in target ? PUBLIC_URL : target.baseUrl

  async function request(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    if (jar.size > 0) headers.set('cookie', [...jar].map(([name, value]) => `${name}=${value}`).join('; '))
    const body = init.body instanceof FormData ? await encodeForm(init.body, headers) : init.body
    const response = await send(new Request(`${baseUrl}${path}`, { ...init, body, headers, redirect: 'manual' }))
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';')
      const name = pair.slice(0, pair.indexOf('='))
      const value = pair.slice(pair.indexOf('=') + 1)
      if (value === '' || /max-age=0\b/i.test(line)) jar.delete(name)
      else jar.set(name, value)
    }
    return response
  }

  /** Opens the hosted page for an authorization request and returns the page with its forms. */
  async function open(query: Record<string, string>, init: RequestInit = {}) {
    const response = await request(`/?${new URLSearchParams({ redirect_uri: REDIRECT_URI, ...query })}`, init)
    return { response, page: await readPage(response) }
  }

  async function post(action: string, fields: Record<string, string>, headers: Record<string, string> = {}) {
    return request(action, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(fields).toString(),
    })
  }

  return { jar, request, open, post }
}

/**
 * A form with files as a browser sends it: multipart bytes with their Content-Length, which the server
 * requires before it reads an upload (a `Request` built in-process from a FormData carries none).
 */
async function encodeForm(form: FormData, headers: Headers): Promise<Uint8Array<ArrayBuffer>> {
  const encoded = new Request(PUBLIC_URL, { method: 'POST', body: form })
  // Read before the body: Bun forgets the type it made up for the form once the body is consumed.
  headers.set('content-type', encoded.headers.get('content-type')!)
  const bytes = new Uint8Array(await encoded.arrayBuffer())
  headers.set('content-length', String(bytes.byteLength))
  return bytes
}

export type PageForms = {
  html: string
  csrf: string | undefined
  actions: string[]
  action(suffix: string): string
}

export async function readPage(response: Response): Promise<PageForms> {
  const html = await response.text()
  const actions = [...html.matchAll(/<form[^>]*action="([^"]+)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'))
  return {
    html,
    csrf: /name="csrf" value="([^"]+)"/.exec(html)?.[1],
    actions,
    action(suffix: string) {
      const found = actions.find((a) => a.split('?')[0]!.endsWith(suffix))
      if (!found) throw new Error(`no form ending in ${suffix} on the page`)
      return found
    },
  }
}

/** The `code` and `state` of a 303 back to the client, or undefined when the response is not one. */
export function callback(response: Response): { url: URL; code: string; state: string | null } | undefined {
  const location = response.headers.get('location')
  if (response.status !== 303 || !location) return undefined
  const url = new URL(location)
  return { url, code: url.searchParams.get('code')!, state: url.searchParams.get('state') }
}

/** The page's "Back to …" link: its href (entities decoded) and its text, or undefined when absent. */
export function backLink(html: string): { href: string; text: string } | undefined {
  const match = /<a href="([^"]*)" class="back">([^<]*)<\/a>/.exec(html)
  return match ? { href: match[1]!.replaceAll('&amp;', '&'), text: match[2]! } : undefined
}
