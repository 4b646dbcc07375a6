import { Value } from '@sinclair/typebox/value'
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../deps.ts'
import { EstimatorBusyError } from '../estimator/types.ts'
import { OAuthError } from '../errors.ts'
import { createConcurrencyLimit } from '../lib/concurrency-limit.ts'
import { withDeadline } from '../lib/deadline.ts'
import { isMultipart, readStrictBody } from '../lib/strict-request.ts'
import { refuseOverLimit } from '../ratelimit/limits.ts'
import { peerAddress } from '../ratelimit/peer.ts'
import { acceptsMethod } from '../clients/methods.ts'
import { siteHomeUrl } from '../clients/model.ts'
import { siteName } from '../branding/page-branding.ts'
import { languages } from '../i18n/languages.ts'
import { closeMethod, consumeFaceChallenge, issueFaceChallenge } from './face-challenge.ts'
import type { Verdict, VerificationMethod } from './methods/method.ts'
import { CsrfForm, LangQuery, readForm } from '../web/forms.ts'
import type { Page, PageContext } from './page-context.tsx'
import type { ResponseSet } from '../web/headers.ts'
import { MAX_FAILED_ATTEMPTS, refundAttempt, type VerificationSession } from './sessions.ts'

/** A method's form: text fields, and for the face check, files (gathered in arrays by the parser). */
const MethodBody = t.Object(
  { csrf: t.String({ maxLength: 128 }) },
  { additionalProperties: t.Union([t.String({ maxLength: 1024 }), t.Array(t.Unknown(), { maxItems: 16 })]) },
)

/** Where the page's script repeats the form's CSRF token, so that a wrong one is refused before the upload is read. */
const CSRF_HEADER = 'x-csrf-token'

/**
 * The verification methods' posts: a method's evidence, checked and turned into a verdict, and the face
 * check's live challenge. A failure counts an attempt (five per session) unless it was the submission's
 * fault; an approval completes the session.
 */
export function methodRoutes(deps: AppDeps, { openCheck, openPage, checkPostToken, openForm, render, complete, offeredMethods }: PageContext) {
  // An upload being read or analysed holds up to MAX_MULTIPART_BYTES, and its parsed frames as much again.
  // The estimator works on FACE_WORKERS frames and lets FACE_QUEUE wait (a request sends one frame at a
  // time); as many uploads again may be arriving while the workers are busy. Past that, an upload read would
  // only be answered "busy" after costing its memory, so it is answered "busy" unread. One address holds at
  // most half the places, and an upload that has not arrived after FACE_UPLOAD_SECONDS gives its place
  // back: uploads trickled in a byte at a time cannot keep everyone else's check waiting.
  const maxUploads = 2 * deps.config.face.workers + deps.config.face.queue
  const uploads = createConcurrencyLimit(maxUploads, Math.ceil(maxUploads / 2))
  const uploadMs = deps.config.face.uploadSeconds * 1000

  /**
   * How a method post is answered: the page again (a plain form post), or, for the page's script,
   * JSON that says what the page would have shown, so the script can keep the camera running.
   */
  function answerer(page: Page, set: ResponseSet, methodId: string, json: boolean) {
    const t = languages[page.lang]
    return {
      async refused(status: number, alert: string | undefined, session: VerificationSession = page.session) {
        set.status = status
        if (!json) return render({ ...page, session }, set, { alert, failed: alert !== undefined })
        const locked = session.failedAttempts >= MAX_FAILED_ATTEMPTS
        set.headers['content-type'] = 'application/json'
        set.headers['cache-control'] = 'no-store'
        return {
          outcome: 'refused',
          message: locked ? t.tooManyAttempts(siteName(page.client)) : (alert ?? ''),
          retry: !locked && !session.closedMethods.includes(methodId),
          home_url: siteHomeUrl(page.client, session.redirectUri),
          back_label: t.backToSite(siteName(page.client)),
        }
      },
      approved(html: string) {
        if (!json) return html
        const redirect = set.headers.location
        set.status = 200
        delete set.headers.location
        set.headers['content-type'] = 'application/json'
        return { outcome: 'approved', redirect }
      },
    }
  }

  /**
   * A method's evidence, read and checked against the session: the verdict, and the answer that says it.
   * `attempt` is the attempt taken for this check when the session was read (its number).
   */
  async function checkEvidence(
    page: Page,
    method: VerificationMethod,
    body: typeof MethodBody.static,
    reply: ReturnType<typeof answerer>,
    set: ResponseSet,
    attempt: number,
  ) {
    const t = languages[page.lang]
    const fields: Record<string, string> = {}
    const files: File[] = []
    for (const [name, value] of Object.entries(body)) {
      if (typeof value === 'string') {
        if (name !== 'csrf') fields[name] = value
      } else if (Array.isArray(value)) {
        files.push(...(value as unknown[]).filter((item): item is File => item instanceof File))
      }
    }
    // A malformed form is not an attempt.
    if (!Value.Check(method.evidence, fields)) {
      await refundAttempt(deps.db, page.session)
      return reply.refused(400, t.invalidEvidence)
    }
    let verdict: Verdict
    try {
      verdict = await method.check({
        fields,
        files,
        ageRequired: page.session.ageRequired,
        client: page.client,
        consumeChallenge: (id) => consumeFaceChallenge(deps, page.session, id),
        session: page.session,
      })
    } catch (cause) {
      await refundAttempt(deps.db, page.session)
      if (!(cause instanceof EstimatorBusyError)) throw cause
      // Busy is not the visitor's failure: no attempt counted, and a hint when to come back.
      deps.metrics.verifications.inc({ method: method.id, outcome: 'busy' })
      set.headers['retry-after'] = '5'
      return reply.refused(503, t.face.busy)
    }
    const outcome = verdict.approved ? 'approved' : verdict.countsAsAttempt === false ? 'unreadable' : 'failed'
    deps.metrics.verifications.inc({ method: method.id, outcome })
    if (verdict.approved) return reply.approved(await complete(page, set, { ...verdict, method: method.id }))
    if (verdict.countsAsAttempt === false) {
      await refundAttempt(deps.db, page.session)
      return reply.refused(400, verdict.reason(t))
    }
    const failed = attempt
    if (verdict.closesMethod) await closeMethod(deps.db, page.session, method.id)
    const left = MAX_FAILED_ATTEMPTS - failed
    const session = { ...page.session, failedAttempts: failed, closedMethods: verdict.closesMethod ? [...page.session.closedMethods, method.id] : page.session.closedMethods }
    // An answer the same face would get again says so, and points to the other ways by name, not to a retry.
    const next = verdict.closesMethod ? otherWays({ ...page, session }) : left > 0 ? `${t.tryAgain} ${t.attemptsLeft(left)}` : ''
    return reply.refused(200, `${verdict.reason(t)} ${next}`.trim(), session)
  }

  /** The ways still open to this visitor on this page, in words: the other methods, and a passkey where the client takes one. */
  function otherWays(page: Page): string {
    const t = languages[page.lang]
    const ways = [
      ...offeredMethods(page).flatMap((method) => (method.id === 'credential' ? [t.wayNames.credential] : [])),
      ...(acceptsMethod(page.client, 'passkey') ? [t.wayNames.passkey] : []),
    ]
    return ways.length > 0 ? t.otherWays(ways) : t.noOtherMethods
  }

  return new Elysia({ name: 'method-routes' })
    .post(
      '/s/:id/methods/:method/challenge',
      async ({ params, query, body, request, cookie, set }) => {
        const page = await openForm(params.id, cookie, request, query.lang, body.csrf)
        const method = offeredMethods(page).find((m) => m.id === params.method)
        if (method?.id !== 'face' || page.session.failedAttempts >= MAX_FAILED_ATTEMPTS) {
          throw new OAuthError('not_found', 'No live challenge for this method in this session')
        }
        const challenge = await issueFaceChallenge(deps, page.session)
        set.headers['cache-control'] = 'no-store'
        return { challenge: challenge.id, poses: challenge.challenge.poses, hold_ms: challenge.challenge.holdMs, expires_in: Math.round((challenge.expiresAt.getTime() - deps.clock.now().getTime()) / 1000) }
      },
      { parse: [readForm, 'urlencoded'], body: CsrfForm, query: LangQuery, detail: { hide: true } },
    )
    .post(
      '/s/:id/methods/:method',
      async ({ params, query, request, cookie, set }) => {
        // Whatever needs no body is checked before the body is read: an upload is up to 24 MiB, and an
        // unknown session, another browser's, or a wrong token must not cost the server that much. The
        // statement that reads the session also counts the check for this address (checks per address,
        // across sessions: opening sessions is free, running checks is not) and takes one of the session's
        // attempts, given back below when the post turns out not to be a check.
        const address = peerAddress(request, deps.config.trustProxy)
        const limit = deps.config.limits.checks
        const { page, hits, attempt } = await openCheck(params.id, cookie, request, query.lang, { key: `check:${address}`, limit })
        let checked = false
        let release = () => {}
        const upload = isMultipart(request)
        try {
          const t = languages[page.lang]
          const method = offeredMethods(page).find((m) => m.id === params.method)
          if (!method) throw new OAuthError('not_found', 'No such verification method for this client')
          const headerToken = request.headers.get(CSRF_HEADER)
          if (headerToken !== null) checkPostToken(page, headerToken)
          // The page's script asks for JSON so that the camera can stay on between tries.
          const reply = answerer(page, set, method.id, (request.headers.get('accept') ?? '').includes('application/json'))
          if (page.session.failedAttempts >= MAX_FAILED_ATTEMPTS) return reply.refused(200, undefined)
          refuseOverLimit(hits, limit, deps.clock.now())
          // Another post of this session took the last attempt meanwhile, or completed it (read again: session_expired).
          if (attempt === null) {
            const current = await openPage(params.id, cookie, request, query.lang)
            return reply.refused(200, undefined, { ...current.session, failedAttempts: MAX_FAILED_ATTEMPTS })
          }
          const acquired = upload ? uploads.tryAcquire(address) : () => {}
          if (!acquired) {
            deps.metrics.verifications.inc({ method: method.id, outcome: 'busy' })
            set.headers['retry-after'] = '5'
            return reply.refused(503, t.face.busy)
          }
          release = acquired
          // The no-JavaScript form sends its token in the body only: checked once read, for a live session of this browser.
          const body = await withDeadline(readStrictBody(request, ['form', 'multipart']), uploadMs, () => undefined)
          if (body === undefined) throw new OAuthError('invalid_request', `The form did not arrive within ${deps.config.face.uploadSeconds} seconds`)
          if (!Value.Check(MethodBody, body)) throw new OAuthError('invalid_request', 'The form does not have the fields of a method post')
          checkPostToken(page, body.csrf)
          checked = true
          return await checkEvidence(page, method, body, reply, set, attempt)
        } finally {
          if (attempt !== null && !checked) await refundAttempt(deps.db, page.session)
          release()
          // An upload's buffers live outside the JS heap, and the collector frees them late: under a stream of
          // uploads the garbage, not the uploads in progress, filled the memory (bench/upload-flood.ts: about
          // 1 GB against 430 MiB with a collection after each upload, at about 20 ms each).
          if (upload) Bun.gc(true)
        }
      },
      // Not parsed before the handler: the session and the token come first (see above).
      { parse: 'none', query: LangQuery, detail: { hide: true } },
    )
}
