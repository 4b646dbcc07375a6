// Passkeys on the hosted page: "Save a passkey" after a check, "Use my passkey" instead of a check, and
// "Delete my saved passkey". The server makes each ceremony's options and checks the answer; this script
// only carries them, as JSON, between the server and the browser's passkey dialog. The panels stay hidden
// unless the browser has WebAuthn and the page is served under a name: WebAuthn refuses IP addresses.
;(() => {
  const panels = document.querySelectorAll('[data-passkey]')
  const PKC = window.PublicKeyCredential
  if (!panels.length || !PKC || !navigator.credentials || typeof fetch !== 'function') return
  const host = location.hostname
  if (/^[0-9.]+$/.test(host) || host.includes(':') || host.startsWith('[')) return

  // Base64url ⇄ bytes, for browsers without the WebAuthn L3 JSON helpers.
  const toBytes = (value) => {
    const base64 = value.replace(/-/g, '+').replace(/_/g, '/')
    const binary = atob(base64 + '==='.slice((base64.length + 3) % 4))
    const bytes = new Uint8Array(binary.length)
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i)
    return bytes.buffer
  }
  const toBase64url = (buffer) => {
    const bytes = new Uint8Array(buffer)
    let binary = ''
    for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i])
    return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')
  }
  const withIds = (list) => (list || []).map((credential) => ({ ...credential, id: toBytes(credential.id) }))

  const creationOptions = (json) =>
    typeof PKC.parseCreationOptionsFromJSON === 'function'
      ? PKC.parseCreationOptionsFromJSON(json)
      : { ...json, challenge: toBytes(json.challenge), user: { ...json.user, id: toBytes(json.user.id) }, excludeCredentials: withIds(json.excludeCredentials) }
  const requestOptions = (json) =>
    typeof PKC.parseRequestOptionsFromJSON === 'function'
      ? PKC.parseRequestOptionsFromJSON(json)
      : { ...json, challenge: toBytes(json.challenge), allowCredentials: withIds(json.allowCredentials) }

  const credentialJson = (credential) => {
    if (typeof credential.toJSON === 'function') return credential.toJSON()
    const r = credential.response
    const response = { clientDataJSON: toBase64url(r.clientDataJSON) }
    if (r.attestationObject) {
      response.attestationObject = toBase64url(r.attestationObject)
      response.transports = typeof r.getTransports === 'function' ? r.getTransports() : []
    } else {
      response.authenticatorData = toBase64url(r.authenticatorData)
      response.signature = toBase64url(r.signature)
      if (r.userHandle) response.userHandle = toBase64url(r.userHandle)
    }
    const json = { id: credential.id, rawId: toBase64url(credential.rawId), type: credential.type, response, clientExtensionResults: credential.getClientExtensionResults() }
    if (credential.authenticatorAttachment) json.authenticatorAttachment = credential.authenticatorAttachment
    return json
  }

  // Every answer is JSON, a refusal included; anything else (a network failure) says the generic line.
  const post = async (url, body) => {
    const response = await fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(body),
    })
    return response.json().catch(() => undefined)
  }

  for (const panel of panels) {
    const text = JSON.parse(panel.dataset.messages || '{}')
    const csrf = panel.dataset.csrf
    const status = panel.querySelector('[data-passkey-status]')
    const buttons = panel.querySelectorAll('[data-passkey-start]')
    const targets = { register: panel.dataset.register, verify: panel.dataset.verify, delete: panel.dataset.remove }
    // The dashboard asks for the password again before adding a passkey; the hosted page has no such field.
    const password = panel.querySelector('[data-passkey-password]')
    const say = (message) => {
      status.textContent = message || ''
    }
    const setBusy = (busy) => buttons.forEach((button) => (button.disabled = busy))

    const run = async (purpose) => {
      const withPassword = purpose === 'register' && password
      if (withPassword && !password.reportValidity()) return
      setBusy(true)
      say(text.working)
      try {
        const started = await post(panel.dataset.options, withPassword ? { csrf, purpose, password: password.value } : { csrf, purpose })
        if (withPassword) password.value = ''
        if (!started || !started.options) return say((started && started.message) || text.failed)
        let credential
        try {
          credential =
            purpose === 'register'
              ? await navigator.credentials.create({ publicKey: creationOptions(started.options) })
              : await navigator.credentials.get({ publicKey: requestOptions(started.options) })
        } catch (error) {
          // Closed, timed out, or no passkey for us on this device: the browser does not say which.
          return say(error && error.name === 'NotAllowedError' ? text.cancelled : text.failed)
        }
        if (!credential) return say(text.cancelled)
        const answer = await post(targets[purpose], { csrf, response: credentialJson(credential) })
        if (!answer) return say(text.failed)
        if (answer.outcome === 'approved' && answer.redirect) {
          location.assign(answer.redirect)
          return
        }
        // A passkey we deleted, or never had: the browser's passkey manager may drop it too.
        if (answer.credential_id && typeof PKC.signalUnknownCredential === 'function') {
          PKC.signalUnknownCredential({ rpId: answer.rp_id, credentialId: answer.credential_id }).catch(() => {})
        }
        say(answer.message || text.failed)
      } catch {
        say(text.failed)
      } finally {
        setBusy(false)
      }
    }

    for (const button of buttons) button.addEventListener('click', () => run(button.dataset.passkeyStart))
    panel.hidden = false
  }
})()
