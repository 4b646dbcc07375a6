import { Type } from '@sinclair/typebox'
import type { Messages } from '../../i18n/messages.ts'
import { takeAnswer } from '../credential-requests.ts'
import type { AppDeps } from '../../deps.ts'
import type { VerificationMethod } from './method.ts'
import { ScriptOutcome } from './script-outcome.tsx'

/**
 * A digital age credential (method class `age_only`): an ID wallet shares one signed statement, "at least
 * N years old", over OpenID4VP, by QR code from another device (an `openid4vp://` request for HAIP wallets,
 * and an `av://` one for the EU age verification app) or through the browser's Digital Credentials API on
 * this one. The wallet's answer is verified where it arrives (credential-routes.tsx);
 * this form only redeems that answer for the session, once.
 */
export function createCredentialMethod(deps: Pick<AppDeps, 'db' | 'clock'>): VerificationMethod {
  return {
    id: 'credential',
    body: 'form',
    availableFor: () => true,
    evidence: Type.Object({ request: Type.String({ minLength: 1, maxLength: 64 }) }),
    render: ({ t, action, csrfToken, ageRequired }) => {
      const messages = {
        scan: t.credential.scan,
        openWallet: t.credential.openWallet,
        waiting: t.credential.waiting,
        checking: t.credential.checking,
        expired: t.credential.expired,
        browserWalletCancelled: t.credential.browserWalletCancelled,
        browserWalletFailed: t.credential.browserWalletFailed,
      }
      return (
        <form method="post" action={action} class="method credential" data-credential-form data-messages={JSON.stringify(messages)}>
          <h3 safe>{t.credential.title}</h3>
          <p safe>{t.credential.intro(ageRequired)}</p>
          <p class="small" safe>
            {t.credential.privacy}
          </p>
          <input type="hidden" name="csrf" value={csrfToken} />
          <input type="hidden" name="request" value="" data-request />
          {/* Two requests for one answer: each QR code says which app it is for; the `av://` one shows only when offered. */}
          <div class="wallet" data-wallet hidden>
            <div class="wallet-app">
              <h4 safe>{t.credential.idWalletTitle}</h4>
              <div class="qr" data-qr></div>
              <p>
                <a data-wallet-link href="#" safe>
                  {t.credential.openWallet}
                </a>
              </p>
            </div>
            <div class="wallet-app" data-av-app hidden>
              <h4 safe>{t.credential.avAppTitle}</h4>
              <div class="qr" data-av-qr></div>
              <p>
                <a data-av-link href="#" safe>
                  {t.credential.openAvApp}
                </a>
              </p>
            </div>
          </div>
          <ScriptOutcome />
          <noscript>
            <p safe>{t.credential.needsScript}</p>
          </noscript>
          <button type="button" data-dc-api hidden safe>
            {t.credential.useBrowserWallet}
          </button>
          <button type="button" data-start hidden safe>
            {t.credential.start}
          </button>
          <script src="/assets/credential.js" defer></script>
        </form>
      )
    },
    async check({ fields, session }) {
      const answer = await takeAnswer(deps, session, fields.request!)
      if (!answer) return { approved: false, reason: (t) => t.credential.noAnswer, countsAsAttempt: false }
      if (answer.outcome === 'approved' && answer.ageOver !== null && answer.ageOver >= session.ageRequired) {
        return { approved: true, methodClass: 'age_only', provenAge: session.ageRequired }
      }
      const failure = answer.failure ?? 'malformed'
      // Declining in the wallet is a choice, not a failed check; an issuer's status list out of reach is nobody's failure.
      const reason = (t: Messages) => t.credential.failures[failure](session.ageRequired)
      return { approved: false, reason, countsAsAttempt: failure !== 'declined' && failure !== 'status_unavailable' }
    },
  }
}
