// The face check's camera: progressive enhancement of a plain file-upload form. Where the browser can
// open a camera, it shows a live preview, takes three frames a moment apart and sends them in the same
// form post; everywhere else the file input (capture=user) still works. Frames go only to this server.
;(() => {
  const form = document.querySelector('[data-face-form]')
  const media = navigator.mediaDevices
  if (!form || !media || typeof media.getUserMedia !== 'function' || typeof DataTransfer === 'undefined') return

  const text = JSON.parse(form.dataset.messages || '{}')
  const start = form.querySelector('[data-start]')
  const submit = form.querySelector('[data-submit]')
  const upload = form.querySelector('[data-upload]')
  const input = form.querySelector('input[type=file]')
  const camera = form.querySelector('[data-camera]')
  const video = form.querySelector('video')
  const status = form.querySelector('[data-status]')
  const FRAMES = 3
  const GAP_MS = 300
  const MAX_SIDE = 960

  start.hidden = false
  submit.hidden = true
  upload.hidden = true
  input.required = false

  const say = (message) => {
    status.textContent = message
  }
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

  const fallBackToUpload = () => {
    say(text.unavailable)
    start.hidden = true
    upload.hidden = false
    input.required = true
    submit.hidden = false
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
    } catch {
      fallBackToUpload()
    }
  })

  const grab = () =>
    new Promise((resolve, reject) => {
      const scale = Math.min(1, MAX_SIDE / Math.max(video.videoWidth, video.videoHeight))
      const canvas = document.createElement('canvas')
      canvas.width = Math.round(video.videoWidth * scale)
      canvas.height = Math.round(video.videoHeight * scale)
      canvas.getContext('2d').drawImage(video, 0, 0, canvas.width, canvas.height)
      canvas.toBlob((blob) => (blob ? resolve(blob) : reject(new Error('no frame'))), 'image/jpeg', 0.92)
    })

  form.addEventListener('submit', async (event) => {
    if (!video.srcObject) return
    event.preventDefault()
    submit.disabled = true
    form.setAttribute('aria-busy', 'true')
    say(text.checking)
    const frames = new DataTransfer()
    for (let i = 0; i < FRAMES; i++) {
      if (i > 0) await sleep(GAP_MS)
      frames.items.add(new File([await grab()], `frame-${i + 1}.jpg`, { type: 'image/jpeg' }))
    }
    for (const track of video.srcObject.getTracks()) track.stop()
    input.files = frames.files
    form.submit()
  })
})()
