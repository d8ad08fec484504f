// The example extension for Firefox (MV3): the same files, the manifest rewritten where
// Firefox differs. Firefox runs the background as an event page (`background.scripts`, no
// service worker), wants an add-on id, and its store asks what data leaves the browser.
// `node scripts/firefox-example.mjs <folder>` rewrites the manifest of the copy in that
// folder, after copying example/ there (without warden/: compile the library into
// <folder>/warden) when it holds none yet. The project's `npm run lint:firefox` builds one
// in dist/example-firefox and lints it.
import { cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const target = process.argv[2];
if (!target) throw new Error("Usage: node scripts/firefox-example.mjs <folder>");
if (!existsSync(join(target, "manifest.json"))) {
  const example = join(import.meta.dirname, "..", "example");
  cpSync(example, target, { recursive: true, filter: (source) => source !== join(example, "warden") });
}

const path = join(target, "manifest.json");
const manifest = JSON.parse(readFileSync(path, "utf8"));
manifest.background = { scripts: [manifest.background.service_worker], type: "module" };
// The library needs Firefox 129 (WebCrypto Ed25519); the example asks for 140 (142 on
// Android) because that is where the data-consent key below is read, and Mozilla's
// linter warns of a key older versions ignore.
manifest.browser_specific_settings = {
  gecko: {
    id: "tabmaster-example@warden.example.com",
    strict_min_version: "140.0",
    // The sign-in sends the person's address and the mailed code to the vendor's Warden.
    data_collection_permissions: { required: ["personallyIdentifyingInfo", "authenticationInfo"] },
  },
  gecko_android: { strict_min_version: "142.0" },
};
writeFileSync(path, `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`wrote a Firefox MV3 manifest into ${target}`);
