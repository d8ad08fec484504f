// The example extension's one build step: the compiled library (dist/, from `npm run
// build`) copied into example/warden/, where the extension's scripts import it from.
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const from = join(root, "dist");
const to = join(root, "example", "warden");
mkdirSync(to, { recursive: true });
const files = readdirSync(from).filter((file) => file.endsWith(".js"));
for (const file of files) copyFileSync(join(from, file), join(to, file));
console.log(`copied ${files.length} files of dist/ into example/warden/`);
