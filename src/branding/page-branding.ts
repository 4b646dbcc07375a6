import type { Client } from '../clients/model.ts'
import type { LogoVersion } from './branding.ts'
import { darken, type HexColour } from './contrast.ts'

/** What the hosted page shows of a site's look; every part absent for a site that set none. */
export type PageBranding = {
  logo?: { src: string; width: number; height: number }
  /** Our stylesheet of the site's accent colour, linked after ofage.css. */
  stylesheet?: string
  privacyUrl?: string
}

type BrandedClient = Pick<Client, 'id' | 'name' | 'displayName' | 'accentColour' | 'privacyUrl'>

/** The site's name wherever the page names it: its display name, else the name the operator gave the client. */
export function siteName(client: Pick<Client, 'name' | 'displayName'>): string {
  return client.displayName ?? client.name
}

/**
 * The page's links to the site's look, each under our own origin with a version in its query, so that a
 * browser may keep it for a year and a change is a new URL. Undefined when the site set nothing: the page
 * then carries no trace of branding at all.
 */
export function pageBranding(client: BrandedClient, logo: LogoVersion | undefined): PageBranding | undefined {
  if (!logo && !client.accentColour && !client.privacyUrl) return undefined
  const base = `/branding/${encodeURIComponent(client.id)}`
  return {
    ...(logo && { logo: { src: `${base}/logo.png?v=${logoVersion(logo)}`, width: logo.width, height: logo.height } }),
    ...(client.accentColour && { stylesheet: `${base}/theme.css?v=${themeVersion(client.accentColour)}` }),
    ...(client.privacyUrl && { privacyUrl: client.privacyUrl }),
  }
}

/** The logo's URL version: the start of its SHA-256, 64 bits, plenty to tell one upload from the next. */
export function logoVersion(logo: Pick<LogoVersion, 'sha256'>): string {
  return logo.sha256.slice(0, 16)
}

/** The theme depends on the colour alone, so the colour is its version. */
export function themeVersion(accent: string): string {
  return accent.slice(1)
}

/**
 * The stylesheet of a site's accent colour: the rules of public/ofage.css that paint our blue, in the site's
 * colour. Each place it meets text is one that src/branding/contrast.ts `ACCENT_PAIRS` checks.
 */
export function themeStylesheet(accent: HexColour): string {
  return [
    `/* ofage: this site's accent colour, checked against WCAG 2.2 AA where it meets text (src/branding/). */`,
    `a, button.link, button.secondary, nav.languages details summary, .languages a { color: ${accent}; }`,
    `button:not(.link, .secondary), a.button { background: ${accent}; color: #fff; }`,
    `button:not(.link, .secondary):hover, a.button:hover { background: ${darken(accent)}; }`,
    // An outlined button (a passkey, beside the page's own way) stays outlined: the colour on white, as links are.
    `button.secondary, button.secondary:hover { border-color: ${accent}; background: #fff; }`,
    '',
  ].join('\n')
}
