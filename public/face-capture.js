// The face check's camera. It asks the server for a live challenge (poses, and how long each is shown,
// both chosen there), shows one prompt after another for its time, takes two frames late under each,
// and posts the frames with the prompt each was taken under. The camera stays on between tries; the
// answer comes back as JSON, so a refusal is shown in place and an approval goes on to the site. Frames
// go only to this server. Without a camera, the file input (only where the operator allows uploads), or
// what to do instead and the way back to the site, said as the page opens when the device has no camera
// at all, before anything is asked of the visitor.
;(() => {
  const form = document.querySelector('[data-face-form]')
  if (!form) return
  const text = JSON.parse(form.dataset.messages || '{}')
  const start = form.querySelector('[data-start]')
  const submit = form.querySelector('[data-submit]')
  const upload = form.querySelector('[data-upload]')
  const input = form.querySelector('input[type=file]')
  const camera = form.querySelector('[data-camera]')
  const video = form.querySelector('video')
  const prompt = form.querySelector('[data-prompt]')
  const status = form.querySelector('[data-status]')
  const outcome = form.querySelector('[data-outcome]')
  const cameraNeeded = form.querySelector('[data-no-camera]')
  const media = navigator.mediaDevices
  const canCapture = media && typeof media.getUserMedia === 'function' && typeof FormData !== 'undefined' && typeof fetch === 'function'

  // When to take frames, as shares of the time a prompt is shown: late, so the head has got there.
  const FRAMES_AT = [0.55, 0.85]
  const MAX_SIDE = 960

  const say = (message) => {
    status.textContent = message || ''
  }
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)))

  const noCamera = () => {
    start.hidden = true
    if (upload) {
      say(text.unavailable)
      upload.hidden = false
      input.required = true
      submit.hidden = false
    } else {
      say('')
      cameraNeeded.hidden = false
      submit.hidden = true
    }
  }

  if (!canCapture) {
    if (!upload) noCamera()
    return
  }
  // A device with no camera at all is told so now, not after a click. Before permission is asked, browsers
  // list a camera's kind without its name, so this asks nothing of the visitor.
  if (!upload && typeof media.enumerateDevices === 'function') {
    media.enumerateDevices().then(
      (devices) => {
        if (!devices.some((device) => device.kind === 'videoinput')) noCamera()
      },
      () => {},
    )
  }

  start.hidden = false
  submit.hidden = true
  if (upload) {
    upload.hidden = true
    input.required = false
  }

  const grab = () =>
    new Promise((resolve, reject) => {
      const scale = Math.min(1, MAX_SIDE / Math.max(video.videoWidth, video.videoHeight))
      const canvas = document.createElement('canvas')
      canvas.width = Math.round(video.videoWidth * scale)
      canvas.height = Math.round(video.videoHeight * scale)
      canvas.getContext('2d').drawImage(video, 0, 0, canvas.width, canvas.height)
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('no frame'))), 'image/jpeg', 0.9)
    })

  // Live feedback before the check: a frame too dark to read a face in says so.
  const brightness = () => {
    const canvas = document.createElement('canvas')
    canvas.width = 32
    canvas.height = 24
    const context = canvas.getContext('2d')
    context.drawImage(video, 0, 0, 32, 24)
    const pixels = context.getImageData(0, 0, 32, 24).data
    let sum = 0
    for (let i = 0; i < pixels.length; i += 4) sum += 0.299 * pixels[i] + 0.587 * pixels[i + 1] + 0.114 * pixels[i + 2]
    return sum / (pixels.length / 4)
  }
  let busy = false
  const watchLight = () => {
    if (!busy && video.videoWidth) say(brightness() < 40 ? text.tooDark : text.ready)
  }

  start.addEventListener('click', async () => {
    start.disabled = true
    say(text.starting)
    try {
      const stream = await media.getUserMedia({ video: { facingMode: 'user', width: { ideal: 1280 }, height: { ideal: 720 } }, audio: false })
      video.srcObject = stream
      camera.hidden = false
      await video.play()
      start.hidden = true
      submit.hidden = false
      submit.focus()
      say(text.ready)
      setInterval(watchLight, 1000)
    } catch {
      noCamera()
    }
  })

  const show = (message, homeUrl, backLabel) => {
    outcome.hidden = false
    outcome.querySelector('[data-message]').textContent = message
    const back = outcome.querySelector('[data-back]')
    back.textContent = backLabel || ''
    back.href = homeUrl || '#'
    back.hidden = !homeUrl
  }

  const post = async (url, body, headers = {}) => {
    const response = await fetch(url, { method: 'POST', body, headers: { accept: 'application/json', ...headers }, credentials: 'same-origin' })
    if (!(response.headers.get('content-type') || '').includes('application/json')) throw new Error('not json')
    return response.json()
  }

  // Shows each prompt for its time (phase 0 "look straight", 1..n the poses, n + 1 "look straight
  // again") and takes the frames within it; the server refuses an answer sent before the times are up.
  const capture = async (poses, holds, data) => {
    const words = [text.lookStraight, ...poses.map((pose) => text[pose]), text.lookStraightAgain]
    const phases = []
    for (const [phase, message] of words.entries()) {
      prompt.textContent = message
      const shownAt = performance.now()
      for (const share of FRAMES_AT) {
        await sleep(share * holds[phase] - (performance.now() - shownAt))
        data.append('frame', new File([await grab()], `frame-${phases.length + 1}.jpg`, { type: 'image/jpeg' }))
        phases.push(phase)
      }
      await sleep(holds[phase] - (performance.now() - shownAt))
    }
    prompt.textContent = ''
    data.append('phases', phases.join(','))
  }

  form.addEventListener('submit', async (event) => {
    if (!video.srcObject) return
    event.preventDefault()
    busy = true
    submit.disabled = true
    outcome.hidden = true
    form.setAttribute('aria-busy', 'true')
    try {
      const csrf = form.querySelector('input[name=csrf]').value
      const challenge = await post(form.dataset.challenge, new URLSearchParams({ csrf }))
      const data = new FormData()
      data.append('csrf', csrf)
      data.append('challenge', challenge.challenge)
      say('')
      await capture(challenge.poses, challenge.hold_ms, data)
      say(text.checking)
      // The token again in a header: a wrong one is refused before the server reads the frames.
      const answer = await post(form.action, data, { 'x-csrf-token': csrf })
      if (answer.outcome === 'approved') {
        for (const track of video.srcObject.getTracks()) track.stop()
        window.location.assign(answer.redirect)
        return
      }
      say('')
      show(answer.message, answer.home_url, answer.back_label)
      if (answer.retry) {
        submit.disabled = false
      } else {
        for (const track of video.srcObject.getTracks()) track.stop()
        camera.hidden = true
        submit.hidden = true
      }
    } catch {
      // Anything unexpected (an expired session, a network error): the session's own page says what to
      // do. Not a reload of the site's link, which would open a new session with fresh attempts.
      window.location.assign(form.action.split('/methods/')[0])
    } finally {
      busy = false
      form.removeAttribute('aria-busy')
      prompt.textContent = ''
    }
  })
})()
