import { eq } from 'drizzle-orm'
import type { Database } from '../db/client.ts'
import { clientLogos, clients } from '../db/schema.ts'
import { OAuthError } from '../errors.ts'
import type { Clock } from '../lib/clock.ts'
import { readHttpUrl, refuseCleartextUrl } from '../lib/http-url.ts'
import { isClientIdShape, type Client } from '../clients/model.ts'
import { AA_TEXT_CONTRAST, accentContrast, formatRatio, readHexColour } from './contrast.ts'
import { readLogoImage, type LogoProblem } from './logo-image.ts'

/** The longest display name, in characters: a shop's name, not a sentence (the page says it in a sentence). */
export const MAX_DISPLAY_NAME = 80
/** An address we show as a link: as long as a redirect URI may be on the dashboard's forms. */
export const MAX_PRIVACY_URL = 2048

/** Why a change of the site's look is refused, for the dashboard to say in words; the CLI prints the description. */
export type BrandingProblem = 'display_name' | 'accent_colour' | 'accent_contrast' | 'privacy_url' | LogoProblem

/** A refused change of the site's look: `invalid_request`, with which rule it broke (and the contrast it reached). */
export class BrandingError extends OAuthError {
  constructor(
    readonly problem: BrandingProblem,
    description: string,
    readonly ratio?: number,
  ) {
    super('invalid_request', description)
  }
}

/** What the look of a client's page is made of, each null to clear it, undefined to leave it. */
export type BrandingChanges = { displayName?: string | null | undefined; accentColour?: string | null | undefined; privacyUrl?: string | null | undefined }

export type ClientLogo = { png: Uint8Array<ArrayBuffer>; sha256: string; width: number; height: number }
export type LogoVersion = Omit<ClientLogo, 'png'>

/** The site's look as the CLI shows it, wire names; `logo` is null without one. */
export function describeBranding(client: Pick<Client, 'displayName' | 'accentColour' | 'privacyUrl'>, logo: LogoVersion | undefined) {
  return {
    display_name: client.displayName,
    accent_colour: client.accentColour,
    privacy_url: client.privacyUrl,
    logo: logo ? { sha256: logo.sha256, width: logo.width, height: logo.height } : null,
  }
}

/**
 * Changes a client's display name, accent colour and privacy policy link; returns the client, or undefined when
 * there is none. Every value is checked before anything is written, and a refusal changes nothing.
 */
export async function updateBranding(db: Database, clientId: string, changes: BrandingChanges): Promise<Client | undefined> {
  const displayName = changes.displayName == null ? changes.displayName : readDisplayName(changes.displayName)
  const accentColour = changes.accentColour == null ? changes.accentColour : readAccentColour(changes.accentColour)
  if (!isClientIdShape(clientId)) return undefined
  return db.transaction(async (tx) => {
    const [client] = await tx.select().from(clients).where(eq(clients.id, clientId)).for('update')
    if (!client) return undefined
    const privacyUrl = changes.privacyUrl == null ? changes.privacyUrl : readPrivacyUrl(changes.privacyUrl, client.sandbox)
    const set = {
      ...(displayName !== undefined && { displayName }),
      ...(accentColour !== undefined && { accentColour }),
      ...(privacyUrl !== undefined && { privacyUrl }),
    }
    if (Object.keys(set).length === 0) return client
    const [updated] = await tx.update(clients).set(set).where(eq(clients.id, clientId)).returning()
    return updated
  })
}

/** Trimmed, 1 to {@link MAX_DISPLAY_NAME} characters, no control characters and no direction overrides that could make it read as another name. */
export function readDisplayName(text: string): string {
  const name = text.trim()
  if (name === '' || [...name].length > MAX_DISPLAY_NAME) {
    throw new BrandingError('display_name', `the display name must be 1 to ${MAX_DISPLAY_NAME} characters (none clears it)`)
  }
  if (/[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u.test(name)) {
    throw new BrandingError('display_name', 'the display name must not contain control characters or text-direction marks')
  }
  return name
}

/** `#rrggbb` whose contrast where it meets text on the page reaches WCAG 2.2 AA (src/branding/contrast.ts). */
export function readAccentColour(text: string): string {
  const colour = readHexColour(text)
  if (!colour) throw new BrandingError('accent_colour', `the accent colour must be #rrggbb, six hexadecimal digits: ${JSON.stringify(text.slice(0, 32))}`)
  const { ratio, passes } = accentContrast(colour)
  if (!passes) {
    throw new BrandingError(
      'accent_contrast',
      `the accent colour ${colour} reaches only ${formatRatio(ratio)} against white text and the page's light backgrounds; WCAG 2.2 AA needs ${AA_TEXT_CONTRAST}:1 (pick a darker colour)`,
      ratio,
    )
  }
  return colour
}

/** The rules of the client's home address (src/clients/rules.ts): an absolute http(s) URL, https for a live client. */
function readPrivacyUrl(text: string, sandbox: boolean): string {
  const wrong = (description: string) => new BrandingError('privacy_url', description)
  if (text.length > MAX_PRIVACY_URL) throw wrong(`the privacy policy URL must be at most ${MAX_PRIVACY_URL} characters`)
  let url: URL
  try {
    url = readHttpUrl('the privacy policy URL', text)
    refuseCleartextUrl('the privacy policy URL', url, sandbox)
  } catch (cause) {
    throw cause instanceof OAuthError ? wrong(cause.description) : cause
  }
  // As the URL parser writes it, so that no stray character reaches the href.
  return url.href
}

/**
 * Reads an upload as a logo (src/branding/logo-image.ts) and makes it the client's, replacing any earlier one.
 * Returns what is stored, or undefined when there is no such client; a refused file is a {@link BrandingError}.
 */
export async function setClientLogo(deps: { db: Database; clock: Clock }, clientId: string, bytes: Uint8Array): Promise<LogoVersion | undefined> {
  const read = await readLogoImage(bytes)
  if (!read.ok) throw new BrandingError(read.problem, `the logo is refused: ${read.detail}`)
  const { png, sha256, width, height } = read.logo
  return deps.db.transaction(async (tx) => {
    const [client] = await tx.select({ id: clients.id }).from(clients).where(eq(clients.id, clientId)).for('update')
    if (!client) return undefined
    const row = { png, sha256, width, height, createdAt: deps.clock.now() }
    await tx.insert(clientLogos).values({ clientId, ...row }).onConflictDoUpdate({ target: clientLogos.clientId, set: row })
    return { sha256, width, height }
  })
}

/** Removes a client's logo; whether it had one. */
export async function removeClientLogo(db: Database, clientId: string): Promise<boolean> {
  const removed = await db.delete(clientLogos).where(eq(clientLogos.clientId, clientId)).returning({ clientId: clientLogos.clientId })
  return removed.length > 0
}

/** The stored logo, bytes and all: for the image route only. */
export async function findClientLogo(db: Database, clientId: string): Promise<ClientLogo | undefined> {
  const [logo] = await db
    .select({ png: clientLogos.png, sha256: clientLogos.sha256, width: clientLogos.width, height: clientLogos.height })
    .from(clientLogos)
    .where(eq(clientLogos.clientId, clientId))
  return logo
}

/** Which logo a client has, without its bytes: what a page needs to link it. */
export async function findLogoVersion(db: Database, clientId: string): Promise<LogoVersion | undefined> {
  const [logo] = await db.select({ sha256: clientLogos.sha256, width: clientLogos.width, height: clientLogos.height }).from(clientLogos).where(eq(clientLogos.clientId, clientId))
  return logo
}

/** Every client's logo version by client id, without bytes: for `clients list`. */
export async function listLogoVersions(db: Database): Promise<Map<string, LogoVersion>> {
  const rows = await db.select({ clientId: clientLogos.clientId, sha256: clientLogos.sha256, width: clientLogos.width, height: clientLogos.height }).from(clientLogos)
  return new Map(rows.map(({ clientId, ...version }) => [clientId, version]))
}
