// The digital credential method on the hosted page: opens a wallet request, shows its QR codes (another
// device: one for HAIP wallets, one for the EU age verification app) and links (a wallet app on this one), offers the browser's Digital Credentials API where it exists,
// and watches the request until the wallet has answered; then the form redeems the answer. No inline script
// (CSP): the page's words come in data-messages.
;(() => {
  const form = document.querySelector('[data-credential-form]')
  if (!form || typeof fetch !== 'function') return
  const text = JSON.parse(form.dataset.messages || '{}')
  const start = form.querySelector('[data-start]')
  const dcButton = form.querySelector('[data-dc-api]')
  const wallet = form.querySelector('[data-wallet]')
  const qr = form.querySelector('[data-qr]')
  const link = form.querySelector('[data-wallet-link]')
  const avApp = form.querySelector('[data-av-app]')
  const avQr = form.querySelector('[data-av-qr]')
  const avLink = form.querySelector('[data-av-link]')
  const status = form.querySelector('[data-status]')
  const outcome = form.querySelector('[data-outcome]')
  const requestField = form.querySelector('[data-request]')
  const csrf = form.querySelector('input[name=csrf]').value
  const sessionPath = form.action.split('/methods/')[0]
  const base = form.action.split('?')[0]
  const lang = form.action.includes('?') ? `&${form.action.split('?')[1]}` : ''
  const hasDigitalCredentials =
    typeof window.DigitalCredential !== 'undefined' && !!navigator.credentials && typeof navigator.credentials.get === 'function'
  let current
  let timer

  const say = (words) => {
    status.textContent = words || ''
  }
  const fail = () => window.location.assign(sessionPath)
  const post = async (url, fields) => {
    const response = await fetch(url, { method: 'POST', body: new URLSearchParams({ csrf, ...fields }), headers: { accept: 'application/json' }, credentials: 'same-origin' })
    if (!(response.headers.get('content-type') || '').includes('application/json')) throw new Error('not json')
    return { ok: response.ok, body: await response.json() }
  }

  const show = (message, homeUrl, backLabel) => {
    outcome.hidden = false
    outcome.querySelector('[data-message]').textContent = message
    const back = outcome.querySelector('[data-back]')
    back.textContent = backLabel || ''
    back.href = homeUrl || '#'
    back.hidden = !homeUrl
  }

  // The wallet answered (to our server, or through this page): the form post completes the session.
  const redeem = async () => {
    clearTimeout(timer)
    say(text.checking)
    const answer = (await post(form.action, { request: current.request })).body
    if (answer.outcome === 'approved') return window.location.assign(answer.redirect)
    wallet.hidden = true
    say('')
    show(answer.message, answer.home_url, answer.back_label)
    start.hidden = !answer.retry
    dcButton.hidden = !answer.retry || !hasDigitalCredentials
  }

  const watch = async () => {
    try {
      const response = await fetch(`${base}/status?request=${encodeURIComponent(current.request)}${lang}`, { headers: { accept: 'application/json' }, credentials: 'same-origin' })
      if (!response.ok) return fail()
      const { status: state } = await response.json()
      if (state === 'answered') return redeem()
      if (state === 'expired') {
        wallet.hidden = true
        start.hidden = false
        return say(text.expired)
      }
      timer = setTimeout(watch, 1500)
    } catch {
      timer = setTimeout(watch, 3000)
    }
  }

  const open = async () => {
    clearTimeout(timer)
    outcome.hidden = true
    const { ok, body } = await post(`${base}/start`, {})
    if (!ok) throw new Error('no request')
    current = body
    requestField.value = body.request
    return body
  }

  start.addEventListener('click', async () => {
    try {
      const request = await open()
      qr.innerHTML = request.qr_svg
      link.href = request.wallet_url
      // The EU age verification app's own request (av://), for the same answer, where the operator offers it.
      avApp.hidden = !request.av_url
      avQr.innerHTML = request.av_qr_svg || ''
      avLink.href = request.av_url || '#'
      wallet.hidden = false
      start.hidden = true
      say(`${text.scan} ${text.waiting}`)
      timer = setTimeout(watch, 1500)
    } catch {
      fail()
    }
  })

  // The requests this browser says it can carry (W3C Digital Credentials: userAgentAllowsProtocol, where it
  // exists). Our server sends them in order of preference; the browser and the wallet pick one.
  const carried = (requests) =>
    typeof window.DigitalCredential.userAgentAllowsProtocol === 'function'
      ? requests.filter((request) => window.DigitalCredential.userAgentAllowsProtocol(request.protocol))
      : requests

  dcButton.addEventListener('click', async () => {
    let request
    try {
      request = await open()
    } catch {
      return fail()
    }
    const requests = carried(request.dc_api)
    if (requests.length === 0) return say(text.browserWalletFailed)
    let credential
    try {
      credential = await navigator.credentials.get({ mediation: 'required', digital: { requests } })
    } catch (cause) {
      // Dismissed, or no wallet here holds such an ID: nothing was shared, and the QR code still works.
      return say(cause && cause.name === 'NotAllowedError' ? text.browserWalletCancelled : text.browserWalletFailed)
    }
    try {
      say(text.checking)
      await post(`${base}/dc-response`, { request: request.request, response: JSON.stringify({ protocol: credential.protocol, data: credential.data }) })
      await redeem()
    } catch {
      fail()
    }
  })

  start.hidden = false
  dcButton.hidden = !hasDigitalCredentials
})()
