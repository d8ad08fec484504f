import type { FastifySwaggerUiOptions } from "@fastify/swagger-ui";
import { MARK } from "./mark.js";

// The reference page at /api/v1/docs is Warden's: its own title, mark and icon (no
// framework logo), reading the same /api/v1/openapi.json that clients fetch. Its CSP
// lists only the page's own assets: no `upgrade-insecure-requests`, which made a browser
// fetch the scripts over HTTPS from a server answering plain HTTP (a blank page), and no
// outside hosts, since the page is served with no internet access.
const WORDMARK = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 220 40" width="220" height="40"><g transform="translate(0 4)">${MARK.replace(/^<svg[^>]*>|<\/svg>$/g, "")}</g><text x="42" y="28" font-family="Helvetica, Arial, sans-serif" font-size="22" font-weight="700" fill="#fff">Warden API</text></svg>`;

/** A function for the page's script, from its source: never called here, only sent. */
function browserFunction(...parameterNamesAndBody: string[]): () => object {
  return new Function(...parameterNamesAndBody) as () => object;
}

export function docsPageOptions(apiPrefix: string): FastifySwaggerUiOptions {
  return {
    routePrefix: `${apiPrefix}/docs`,
    theme: {
      title: "Warden API",
      favicon: [{ filename: "warden.svg", rel: "icon", sizes: "any", type: "image/svg+xml", content: Buffer.from(MARK) }],
    },
    logo: { type: "image/svg+xml", content: Buffer.from(WORDMARK) },
    uiConfig: {
      // The top bar loads the first of `urls`; the page's own /docs/json is left unused.
      urls: [{ url: `${apiPrefix}/openapi.json`, name: "Warden API v1" }],
      // Swagger UI's own top-bar logo is an SVG carrying an inline <style>, which `style-src
      // 'self'` refuses (a CSP violation in the console on every load), and `logo` below
      // replaces it with Warden's anyway: a plugin renders no Swagger logo rather than the
      // policy allowing inline styles. Plugins given here replace the default list, so
      // DownloadUrl (which fetches `urls`) is named again. @fastify/swagger-ui sends a
      // function to the browser as its source text, so each is made from a string: what a
      // compiler makes of a function written here (tsx adds a helper `__name`) would not run there.
      plugins: [
        browserFunction("system", "return SwaggerUIBundle.plugins.DownloadUrl(system);"),
        browserFunction("return { components: { Logo: () => null } };"),
      ],
    },
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
