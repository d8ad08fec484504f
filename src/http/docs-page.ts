import type { FastifySwaggerUiOptions } from "@fastify/swagger-ui";

// The reference page at /api/v1/docs is Warden's: its own title, mark and icon (no
// framework logo), reading the same /api/v1/openapi.json that clients fetch. Its CSP
// lists only the page's own assets: no `upgrade-insecure-requests`, which made a browser
// fetch the scripts over HTTPS from a server answering plain HTTP (a blank page), and no
// outside hosts, since the page is served with no internet access.

const MARK = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><path d="M16 2 4 7v8c0 7.5 5.1 13.4 12 15 6.9-1.6 12-7.5 12-15V7z" fill="#2f6f4f"/><path d="m10 16 4 4 8-9" fill="none" stroke="#fff" stroke-width="3" stroke-linecap="round" stroke-linejoin="round"/></svg>`;
const WORDMARK = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 220 40" width="220" height="40"><g transform="translate(0 4)">${MARK.replace(/^<svg[^>]*>|<\/svg>$/g, "")}</g><text x="42" y="28" font-family="Helvetica, Arial, sans-serif" font-size="22" font-weight="700" fill="#fff">Warden API</text></svg>`;

export function docsPageOptions(apiPrefix: string): FastifySwaggerUiOptions {
  return {
    routePrefix: `${apiPrefix}/docs`,
    theme: {
      title: "Warden API",
      favicon: [{ filename: "warden.svg", rel: "icon", sizes: "any", type: "image/svg+xml", content: Buffer.from(MARK) }],
    },
    logo: { type: "image/svg+xml", content: Buffer.from(WORDMARK) },
    // The top bar loads the first of `urls`; the page's own /docs/json is left unused.
    uiConfig: { urls: [{ url: `${apiPrefix}/openapi.json`, name: "Warden API v1" }] },
    staticCSP: {
      "default-src": "'self'",
      "base-uri": "'self'",
      "font-src": "'self' data:",
      "frame-ancestors": "'self'",
      "img-src": "'self' data:",
      "object-src": "'none'",
      "script-src": "'self'",
      "script-src-attr": "'none'",
      "style-src": "'self'",
    },
  };
}
