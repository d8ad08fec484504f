// `warden admin import` and `backup`: customers brought in from elsewhere, and a
// consistent copy of the SQLite database while Warden runs.

import type { ImportSummary } from "../import/import.service.js";

import { type Command, Interrupted, str } from "./command.js";
import { importProgressReporter } from "./progress.js";

export const dataCommands: Record<string, Command> = {
  "admin import": {
    summary: "Import customers bought elsewhere from an NDJSON file (all or nothing; Ctrl-C rolls back).",
    usage: "warden admin import --workspace S --env test|live FILE",
    options: { workspace: { type: "string" }, env: { type: "string" } },
    required: ["workspace", "env"],
    positionals: 1,
    async run({ values: v, positionals: [file], services, progress, clock: progressClock, interruption }) {
      const { ImportInterrupted, importFile } = await import("../import/import.service.js");
      const { db, clock } = await services();
      // With --json stdout holds only the summary; the figures go on a terminal only.
      const reporter = v.json && progress.columns === undefined ? null : importProgressReporter(progress, progressClock);
      let summary: ImportSummary;
      try {
        summary = await importFile(
          db,
          clock,
          { workspace: str(v, "workspace"), env: str(v, "env"), path: file as string },
          { onProgress: (p) => reporter?.update(p), signal: interruption() },
        );
      } catch (error) {
        reporter?.end();
        if (error instanceof ImportInterrupted) throw new Interrupted(error.message);
        throw error;
      }
      reporter?.finish();
      const { unchanged, credits, used, ...written } = summary;
      const lines = Object.entries(written)
        .map(([kind, n]) => `${kind}: ${n}`)
        .join(", ");
      // Not lines: what the lines' meters wrote, one per meter of a source.
      const meters = `credit entries: ${credits}, used counters: ${used}`;
      return { json: summary, text: `Imported ${lines}, ${meters}; ${unchanged} line${unchanged === 1 ? "" : "s"} stored already as they are (unchanged).` };
    },
  },
  "admin backup": {
    summary: "Copy the SQLite database consistently while Warden runs and writes (PostgreSQL: use pg_dump).",
    usage: "warden admin backup FILE",
    options: {},
    positionals: 1,
    async run({ positionals: [file], services }) {
      const { backupDatabase } = await import("../retention/backup.service.js");
      const backup = await backupDatabase((await services()).config, file as string);
      const key = backup.secretKeyFile
        ? `\nKeep ${backup.secretKeyFile} with it: it seals the webhook and Stripe secrets, the licence keys and the token signing keys (or set WARDEN_SECRET_KEY).`
        : "";
      return { json: backup, text: `Backed up ${backup.source} to ${backup.file} (${backup.bytes} bytes).${key}` };
    },
  },
};
