/**
 * Content-Security-Policy of the console (index.html and its assets). Scripts come only from the
 * console's own files (no inline script, no eval) plus the two sign-in widgets it loads on demand
 * (Cloudflare Turnstile, the Telegram login widget); admin-configured pages (HomePageContent,
 * About, chat links) open in frames from any http(s) address; styles may be inline because MUI
 * (emotion) injects them at run time; images may be inline (data:) for logos; images, songs and
 * videos of generated tasks load from the upstream's http(s) addresses.
 */
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self' https://challenges.cloudflare.com https://telegram.org",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob: https: http:",
  "media-src 'self' https: http:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self' https: http:",
  "object-src 'none'",
  "base-uri 'self'",
  "frame-ancestors 'self'"
].join('; ')

/** Headers every console file is served with. */
export const CONSOLE_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'strict-origin-when-cross-origin'
}
