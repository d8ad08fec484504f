#!/usr/bin/env node
// The installed entry point runs the compiled CLI (built by `npm install` through `prepare`).
import { main } from "../dist/cli.js";

process.exitCode = await main(process.argv.slice(2));
