#!/usr/bin/env node
// The installed entry point runs the compiled CLI (built by `npm install` through `prepare`).
import * as nodeModule from "node:module";
import { fileURLToPath } from "node:url";

// V8 keeps what it compiled of Warden and its packages in dist/.compile-cache, beside the
// code it was compiled from (so only who may change that code may change the cache), and
// the next start reads it instead of compiling again: an admin command's start is ~40 %
// shorter (bench/README.md, "The command line's start"). Node.js checks each entry against
// its source file and its own version; a folder it cannot create or write costs nothing
// (the command starts uncached), and NODE_DISABLE_COMPILE_CACHE=1 turns it off.
// Node.js 20 has no compile cache: the CLI then says which versions it runs on.
nodeModule.enableCompileCache?.(fileURLToPath(new URL("../dist/.compile-cache", import.meta.url)));

const { main } = await import("../dist/cli.js");
process.exitCode = await main(process.argv.slice(2));
