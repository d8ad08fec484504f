import { readFileSync } from "node:fs";

/**
 * Warden's version, from the package's own package.json (one level above src/ and dist/),
 * read once: `warden --version` and the OpenAPI document's `info.version` say the same.
 */
export const WARDEN_VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
