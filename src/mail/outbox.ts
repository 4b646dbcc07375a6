import type { Transporter } from 'nodemailer'
import type { MailConfig } from '../config.ts'
import type { Logger } from '../lib/log.ts'

/** One plain-text email. */
export type OutgoingMail = { to: string; subject: string; text: string }

/**
 * Emails composed and sent after the request that asked for them has been answered, so that neither the
 * answer nor its timing depends on whether there was anything to send (a "Forgot password?" for an unknown
 * email sends nothing, and must look the same).
 */
export type Outbox = {
  /**
   * Runs `compose` once the current request's work has yielded, and sends what it returns (nothing when
   * undefined). Never throws: a send is logged as `mail_sent`, a failure as `mail_failed` with its error
   * code, each with `purpose`, never a recipient or a line of the message.
   */
  post(purpose: string, compose: () => Promise<OutgoingMail | undefined>): void
  /** Resolves once everything posted so far has been sent or has failed. */
  drained(): Promise<void>
  /** Waits for what was posted, then closes the connection to the server. */
  close(): Promise<void>
}

/** The SMTP transport's limits: a server that does not answer must not keep a send (and shutdown) waiting long. */
const CONNECTION_TIMEOUT_MS = 10_000
const SOCKET_TIMEOUT_MS = 30_000

/**
 * An outbox that sends through the SMTP server of SMTP_URL, from SMTP_FROM (nodemailer). The library loads with
 * the first email, not with the server: most processes send none, and it is a few MiB of each one's memory.
 */
export function createSmtpOutbox(config: MailConfig, log: Logger): Outbox {
  // One transport for every send, made by the first (two sends at once share it).
  let transport: Promise<Transporter> | undefined
  const connect = async (): Promise<Transporter> => {
    const { createTransport } = await import('nodemailer')
    return createTransport(
      {
        host: config.host,
        port: config.port,
        secure: config.secure,
        ...(config.auth && { auth: config.auth }),
        connectionTimeout: CONNECTION_TIMEOUT_MS,
        greetingTimeout: CONNECTION_TIMEOUT_MS,
        socketTimeout: SOCKET_TIMEOUT_MS,
        // Our messages are plain text we wrote: no attachment may read a file or fetch a URL.
        disableFileAccess: true,
        disableUrlAccess: true,
        logger: false,
      },
      { from: config.from },
    )
  }
  const pending = new Set<Promise<void>>()

  async function deliver(purpose: string, compose: () => Promise<OutgoingMail | undefined>): Promise<void> {
    // After the answer: setImmediate lets the route's response go out before any of this work starts.
    await new Promise((resolve) => setImmediate(resolve))
    try {
      const mail = await compose()
      if (!mail) return
      transport ??= connect()
      await (await transport).sendMail(mail)
      log.info('mail_sent', { purpose })
    } catch (cause) {
      // Only the code: the server's reply text may name the recipient, and a query's error its values.
      log.error('mail_failed', { purpose, code: errorCode(cause) })
    }
  }

  async function drained(): Promise<void> {
    while (pending.size > 0) await Promise.all(pending)
  }

  return {
    post(purpose, compose) {
      const sending = deliver(purpose, compose).finally(() => pending.delete(sending))
      pending.add(sending)
    },
    drained,
    async close() {
      await drained()
      if (transport) (await transport).close()
    },
  }
}

/** nodemailer's code (EAUTH, ECONNECTION, EENVELOPE, …) with the server's reply code, or the error's class. */
function errorCode(cause: unknown): string {
  if (!(cause instanceof Error)) return 'unknown'
  const { code, responseCode } = cause as Error & { code?: unknown; responseCode?: unknown }
  const name = typeof code === 'string' && /^[A-Z0-9_]{1,32}$/.test(code) ? code : cause.name
  return typeof responseCode === 'number' ? `${name} ${responseCode}` : name
}
