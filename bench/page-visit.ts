/**
 * One visitor's flow on the hosted page, as `bun run bench` drives it: open the page (GET, a new session),
 * then complete the sandbox form (POST, a code and a 303 to the site). `send` is `fetch` against a server,
 * or an app's handler in process.
 */
export type Send = (request: Request) => Promise<Response>

export async function openPage(send: Send, baseUrl: string, clientId: string, redirectUri: string) {
  const page = await send(new Request(`${baseUrl}/?${new URLSearchParams({ client_id: clientId, redirect_uri: redirectUri, state: 'bench' })}`))
  const html = await page.text()
  const cookie = page.headers.getSetCookie().map((line) => line.split(';')[0]).join('; ')
  const action = /action="([^"]*\/methods\/sandbox[^"]*)"/.exec(html)?.[1]?.replaceAll('&amp;', '&')
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1]
  if (page.status !== 200 || !action || !csrf) throw new Error(`page ${page.status}`)
  return { cookie, action, csrf }
}

export async function completeForm(send: Send, baseUrl: string, page: { cookie: string; action: string; csrf: string }) {
  const done = await send(
    new Request(`${baseUrl}${page.action}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: page.cookie, origin: baseUrl },
      body: new URLSearchParams({ csrf: page.csrf, age: '30', method_class: 'age_only' }).toString(),
    }),
  )
  await done.arrayBuffer()
  if (done.status !== 303) throw new Error(`completion ${done.status}`)
}
