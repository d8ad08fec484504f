// `warden admin …`: the operator's commands. They work directly on the database named
// by DATABASE_URL (or the SQLite file), with the same use cases as the HTTP API. One file
// per family; this is their order in `warden help`.
import { catalogueCommands } from "./admin-catalogue.commands.js";
import { creditCommands } from "./admin-credits.commands.js";
import { dataCommands } from "./admin-data.commands.js";
import { keyCommands } from "./admin-keys.commands.js";
import { ownerCommands } from "./admin-owners.commands.js";
import { paymentCommands } from "./admin-payments.commands.js";
import { usageCommands } from "./admin-usage.commands.js";
import type { Command } from "./command.js";

export const adminCommands: Record<string, Command> = {
  ...ownerCommands,
  ...catalogueCommands,
  ...usageCommands,
  ...creditCommands,
  ...keyCommands,
  ...dataCommands,
  ...paymentCommands,
};
