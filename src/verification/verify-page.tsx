import type { Client } from '../clients/model.ts'
import { siteName as siteNameOf, type PageBranding } from '../branding/page-branding.ts'
import type { VerificationMethod } from './methods/method.ts'
import { languages } from '../i18n/languages.ts'
import type { Language } from '../i18n/language-codes.ts'
import { Layout, withLang } from '../pages/layout.tsx'
import { PasskeySave, PasskeyUse, type PasskeyActions } from './passkey-panel.tsx'

export type VerifyPageProps = {
  lang: Language
  /** The client the page is for: its name, and the settings a method's form states (its face buffer). */
  client: Client
  ageRequired: number
  sessionPath: string
  csrfToken: string
  methods: VerificationMethod[]
  /**
   * The age this request asks for, when the browser's pass covers it. The panel names this age, never the
   * pass's own: a sandbox pass holds the test age typed in, which says nothing about the visitor.
   */
  passAge?: number
  /** The pass is recent enough to stand behind a new passkey: the pass panel offers to save one. */
  canSavePasskey?: boolean
  /** The client accepts passkeys: the page offers to use (and save) one. */
  passkeys: boolean
  /** This browser saved or used a passkey here: the page also offers to delete it. */
  passkeySaved?: boolean
  /** A failed check, or another message the visitor must see first. */
  alert?: string
  /** A quieter notice (a forgotten pass). */
  notice?: string
  /** No more attempts in this session: the forms are not shown. */
  locked?: boolean
  /** A dead end (a failed check, no attempts left): the site's home address, shown as "Back to {site}". */
  homeUrl?: string
  /** The site's home address whatever the state: a method that cannot work on this device offers it (the face check without a camera). */
  siteHome: string
  /** Some method was closed for this session (a face check that could not confirm the age). */
  methodsClosed?: boolean
  /** The site's logo, colour and privacy policy (src/branding/); undefined for a site that set none. */
  branding?: PageBranding | undefined
}

/** The hosted verification page (SPEC.md §4.1): who asks, for what age, how to prove it, what is kept. */
export function VerifyPage(props: VerifyPageProps) {
  const t = languages[props.lang]
  const siteName = siteNameOf(props.client)
  const brand = props.branding
  const action = (path: string) => withLang(`${props.sessionPath}${path}`, props.lang)
  const passkeyActions: PasskeyActions = {
    options: action('/passkey/options'),
    register: action('/passkey/register'),
    verify: action('/passkey'),
    remove: action('/passkey/delete'),
    csrfToken: props.csrfToken,
  }
  return (
    <Layout lang={props.lang} title={`${t.pageTitle} · ${siteName}`} switchPath={props.sessionPath} themeStylesheet={brand?.stylesheet}>
      {brand?.logo && (
        <p class="brand-logo">
          <img src={brand.logo.src} width={String(brand.logo.width)} height={String(brand.logo.height)} alt={t.brand.logo(siteName)} />
        </p>
      )}
      <h1 safe>{t.heading}</h1>
      <p class="asks" safe>
        {t.asks(siteName, props.ageRequired)}
      </p>
      {props.alert !== undefined && (
        <div role="alert" class="alert">
          <p safe>{props.alert}</p>
          {props.homeUrl !== undefined && (
            <p>
              <a href={props.homeUrl} class="back" safe>
                {t.backToSite(siteName)}
              </a>
            </p>
          )}
        </div>
      )}
      {props.notice !== undefined && (
        <p role="status" class="notice" safe>
          {props.notice}
        </p>
      )}
      {!props.locked && props.passAge !== undefined && (
        <section class="pass" aria-labelledby="pass-title">
          <h2 id="pass-title" safe>
            {t.passTitle}
          </h2>
          <p safe>{t.passCovers(props.passAge)}</p>
          <form method="post" action={action('/continue')}>
            <input type="hidden" name="csrf" value={props.csrfToken} />
            <button type="submit" safe>
              {t.continueAsVerified}
            </button>
          </form>
          <form method="post" action={action('/forget')}>
            <input type="hidden" name="csrf" value={props.csrfToken} />
            <button type="submit" class="link" safe>
              {t.forgetPass}
            </button>
          </form>
          {props.passkeys && props.canSavePasskey && <PasskeySave t={t} actions={passkeyActions} />}
        </section>
      )}
      {!props.locked && (
        <section aria-labelledby="methods-title">
          <h2 id="methods-title" safe>
            {t.chooseMethod}
          </h2>
          {props.methods.length === 0 ? (
            <>
              {/* After a closed method, a passkey is still a way where the client takes one: saying "no other way" above its panel would be wrong. */}
              <p safe>{props.methodsClosed ? (props.passkeys ? t.otherWays([t.wayNames.passkey]) : t.noOtherMethods) : t.noMethods}</p>
              {props.homeUrl !== undefined && props.alert === undefined && (
                <p>
                  <a href={props.homeUrl} class="back" safe>
                    {t.backToSite(siteName)}
                  </a>
                </p>
              )}
            </>
          ) : (
            props.methods.map((method) =>
              method.render({
                t,
                action: action(`/methods/${method.id}`),
                challengeAction: action(`/methods/${method.id}/challenge`),
                csrfToken: props.csrfToken,
                ageRequired: props.ageRequired,
                siteName,
                siteHome: props.siteHome,
                onlyWay: props.methods.length === 1 && !props.passkeys && props.passAge === undefined,
                client: props.client,
              }),
            )
          )}
        </section>
      )}
      {!props.locked && props.passkeys && (
        <>
          <PasskeyUse t={t} actions={passkeyActions} canDelete={props.passkeySaved === true} />
          <script src="/assets/passkey.js" defer></script>
        </>
      )}
      <section class="privacy" aria-labelledby="privacy-title">
        <h2 id="privacy-title" safe>
          {t.privacyTitle}
        </h2>
        <p safe>{t.privacy(siteName)}</p>
        {brand?.privacyUrl !== undefined && (
          <p>
            <a href={brand.privacyUrl} rel="noopener noreferrer" safe>
              {t.brand.privacyPolicy(siteName)}
            </a>
          </p>
        )}
      </section>
    </Layout>
  )
}
