import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort } from '../helpers.ts'

/**
 * A real SMTP server on a free loopback port, started by the test (test/mail/smtp_sink.py on Debian's
 * python3-aiosmtpd). Without it the mail tests are skipped with one line; under CI its absence fails.
 */
const PYTHON = '/usr/bin/python3'
const SCRIPT = join(import.meta.dir, 'smtp_sink.py')

export const hasSmtpSink = Bun.spawnSync([PYTHON, '-c', 'import aiosmtpd'], { stdout: 'ignore', stderr: 'ignore' }).exitCode === 0
if (!hasSmtpSink) {
  if (process.env.CI) throw new Error(`the mail tests need ${PYTHON} with aiosmtpd (apt-get install python3-aiosmtpd)`)
  console.warn('mail tests skipped: no aiosmtpd for /usr/bin/python3 (apt-get install python3-aiosmtpd)')
}

/** A message as the server received it, read by Python's email package. */
export type ReceivedMail = {
  mail_from: string
  rcpt_tos: string[]
  /** The user the sender authenticated as, or null. */
  login: string | null
  from: string
  to: string
  subject: string
  content_type: string
  charset: string | null
  /** MIME parts, the message itself included: 1 for a single plain-text body. */
  parts: number
  body: string
  raw: string
}

export type SmtpSink = Awaited<ReturnType<typeof startSmtpSink>>

/**
 * Starts the server; with `user` and `password` it requires them (AUTH). `stop()` ends it and removes its
 * folder; a test calls it in a `finally` or `afterAll`, and the server also exits when this process does
 * (its standard input closes).
 */
export async function startSmtpSink(options: { user?: string; password?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'ofage-smtp-'))
  const port = await freePort()
  const args = [dir, String(port), options.user ?? '', options.password ?? '']
  const child = Bun.spawn([PYTHON, SCRIPT, ...args], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
  const stop = async () => {
    child.kill()
    await child.exited
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await waitForReady(child.stdout, 10_000)
  } catch (cause) {
    await stop()
    throw new Error(`the SMTP sink did not start: ${String(cause)}; ${await new Response(child.stderr).text()}`)
  }
  const messages = (): ReceivedMail[] =>
    readdirSync(dir)
      .filter((name) => name.endsWith('.json'))
      .sort()
      .map((name) => JSON.parse(readFileSync(join(dir, name), 'utf8')) as ReceivedMail)
  const userinfo = options.user ? `${encodeURIComponent(options.user)}:${encodeURIComponent(options.password ?? '')}@` : ''
  return {
    port,
    /** SMTP_URL for this server, with its account when it has one. */
    url: `smtp://${userinfo}127.0.0.1:${port}`,
    messages,
    /** The messages once there are at least `count` of them (polling; a real server delivers in its own time). */
    async waitForMessages(count: number, ms = 15_000): Promise<ReceivedMail[]> {
      const started = Date.now()
      while (messages().length < count) {
        if (Date.now() - started > ms) throw new Error(`${messages().length} of ${count} messages arrived within ${ms} ms`)
        await Bun.sleep(50)
      }
      return messages()
    },
    /** From now on, each message is held `seconds` before it is accepted (a slow server); 0: at once. */
    hold(seconds: number): void {
      if (seconds > 0) writeFileSync(join(dir, 'hold'), String(seconds))
      else rmSync(join(dir, 'hold'), { force: true })
    },
    stop,
  }
}

async function waitForReady(stdout: ReadableStream<Uint8Array>, ms: number): Promise<void> {
  const reader = stdout.getReader()
  const decoder = new TextDecoder()
  let text = ''
  const timer = setTimeout(() => void reader.cancel('timed out'), ms)
  try {
    while (!text.includes('ready')) {
      const { value, done } = await reader.read()
      if (done) throw new Error(text ? `it said: ${text}` : 'it exited')
      text += decoder.decode(value)
    }
  } finally {
    clearTimeout(timer)
    reader.releaseLock()
  }
}
