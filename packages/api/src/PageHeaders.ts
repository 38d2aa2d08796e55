/**
 * The headers every HTML page this service answers carries: the portal's pages and the drive's OAuth
 * callback pages alike. No inline script or style anywhere: the Content-Security-Policy allows only
 * the service's own files.
 */
export const securityHeaders = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; media-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  // a sign-in link carries its token in the URL, a callback its authorization code: never pass a page's address on
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin"
} as const
