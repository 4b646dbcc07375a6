/** What reading a logo gives, on the thread that asked (logo-image.ts) and the one that read it (logo-pixels.ts). */
export type LogoFormat = 'png' | 'jpeg' | 'webp'
/** Why an upload is refused: a closed set that the dashboard says in words and the CLI prints with the detail. */
export type LogoProblem = 'too_large' | 'not_an_image' | 'too_many_pixels' | 'animated' | 'unreadable' | 'too_complex' | 'busy'
export type LogoImage = { png: Uint8Array<ArrayBuffer>; width: number; height: number; sha256: string }
export type LogoResult = { ok: true; logo: LogoImage } | { ok: false; problem: LogoProblem; detail: string }
