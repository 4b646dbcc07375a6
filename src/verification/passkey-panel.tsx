import type { Messages } from '../i18n/messages.ts'

/** Where the passkey script posts, and the page's CSRF token; actions carry the page's language. */
export type PasskeyActions = { options: string; register: string; verify: string; remove: string; csrfToken: string }

/** The short words the script shows, read from a data attribute (no inline script under our CSP). */
function scriptMessages(t: Messages): string {
  const { working, saved, deleted, cancelled, failed } = t.passkey
  return JSON.stringify({ working, saved, deleted, cancelled, failed })
}

function dataAttributes(t: Messages, actions: PasskeyActions) {
  return {
    'data-options': actions.options,
    'data-register': actions.register,
    'data-verify': actions.verify,
    'data-remove': actions.remove,
    'data-csrf': actions.csrfToken,
    'data-messages': scriptMessages(t),
  }
}

/**
 * "Save a passkey", inside the "Verified recently" panel. Hidden until the script finds WebAuthn: without
 * JavaScript or a passkey-capable browser, nothing here can work, so nothing is shown.
 */
export function PasskeySave({ t, actions }: { t: Messages; actions: PasskeyActions }) {
  return (
    <div class="passkey" data-passkey="save" hidden {...dataAttributes(t, actions)}>
      <p safe>{t.passkey.saveIntro}</p>
      <button type="button" class="secondary" data-passkey-start="register" safe>
        {t.passkey.save}
      </button>
      <p class="status" role="status" aria-live="polite" data-passkey-status></p>
    </div>
  )
}

/**
 * "Use my passkey", for every page, a quieter way than the page's methods; hidden like {@link PasskeySave}.
 * "Delete my saved passkey" only where this browser saved or used one (`canDelete`): to everyone else it
 * would be a button about something they do not have.
 */
export function PasskeyUse({ t, actions, canDelete }: { t: Messages; actions: PasskeyActions; canDelete: boolean }) {
  return (
    <section class="passkey" aria-labelledby="passkey-title" data-passkey="use" hidden {...dataAttributes(t, actions)}>
      <h2 id="passkey-title" safe>
        {t.passkey.useTitle}
      </h2>
      <p safe>{t.passkey.useIntro}</p>
      <button type="button" class="secondary" data-passkey-start="verify" safe>
        {t.passkey.use}
      </button>
      {canDelete && (
        <button type="button" class="link" data-passkey-start="delete" safe>
          {t.passkey.remove}
        </button>
      )}
      <p class="status" role="status" aria-live="polite" data-passkey-status></p>
    </section>
  )
}
