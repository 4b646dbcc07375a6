/**
 * The thread a logo is read on (logo-image.ts starts one per upload and ends it after): decoding, scaling
 * and encoding never hold the event loop, and a file that takes longer than its deadline is stopped here,
 * not waited for. Listed as an entrypoint in package.json's build, as the estimator's worker is.
 */
import { renderLogo, type LogoRender } from './logo-pixels.ts'

declare var self: Worker

self.onmessage = async (event: MessageEvent<LogoRender>) => {
  const result = await renderLogo(event.data)
  self.postMessage(result, result.ok ? [result.logo.png.buffer] : [])
}
