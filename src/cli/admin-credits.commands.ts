// `warden admin credits add|remove|list`: a customer's credits of a tool's meter, adjusted
// by hand with a note, and their ledger; the same use cases as the vendor API's.
import { invalidParameter } from "../errors/errors.js";
import type { AdjustedCredits, CreditLedgerEntry } from "../usage/credits.service.js";
import { type Command, optStr, str, type Values } from "./command.js";
import { listText, minute } from "./table.js";

const targetOptions = { workspace: { type: "string" }, env: { type: "string" }, tool: { type: "string" }, email: { type: "string" } } as const;
const adjustOptions = { ...targetOptions, meter: { type: "string" }, amount: { type: "string" }, note: { type: "string" } } as const;
const target = (v: Values) => ({ workspace: str(v, "workspace"), env: str(v, "env"), tool: str(v, "tool"), email: str(v, "email") });

/** A whole number above 0 from the command line, or the refusal that names the option. */
function positive(param: string, raw: string): number {
  const value = /^\s*\d{1,10}\s*$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) throw invalidParameter(param, `--${param} must be a whole number above 0.`);
  return value;
}

const adjustedText = (a: AdjustedCredits, email: string) =>
  `${a.amount > 0 ? `Added ${a.amount}` : `Removed ${-a.amount}`} ${a.meter} credits ${a.amount > 0 ? "to" : "from"} ${email}` +
  `${a.expires_at === null ? "" : ` (lasting until ${minute(Date.parse(a.expires_at))})`}: ${a.balance} available now. Ledger row ${a.id}.`;

export const creditCommands: Record<string, Command> = {
  "admin credits add": {
    summary: "Add credits of a meter to a customer by hand, with a note (an unknown address gets a person record).",
    usage: "warden admin credits add --workspace S --env test|live --tool T --email E --meter M --amount N --note TEXT [--expires-in-days N]",
    options: { ...adjustOptions, "expires-in-days": { type: "string" } },
    required: ["workspace", "env", "tool", "email", "meter", "amount", "note"],
    async run({ values: v, services }) {
      const { adjustCreditsByCommand } = await import("../usage/credits.service.js");
      const days = optStr(v, "expires-in-days");
      const adjusted = await adjustCreditsByCommand(await services(), target(v), {
        meter: str(v, "meter"),
        amount: positive("amount", str(v, "amount")),
        note: str(v, "note"),
        expires_in_days: days === undefined ? undefined : positive("expires-in-days", days),
      });
      return { json: adjusted, text: adjustedText(adjusted, str(v, "email")) };
    },
  },
  "admin credits remove": {
    summary: "Remove credits of a meter from a customer by hand, with a note: soonest-expiring first; refused when fewer are available.",
    usage: "warden admin credits remove --workspace S --env test|live --tool T --email E --meter M --amount N --note TEXT",
    options: { ...adjustOptions },
    required: ["workspace", "env", "tool", "email", "meter", "amount", "note"],
    async run({ values: v, services }) {
      const { adjustCreditsByCommand } = await import("../usage/credits.service.js");
      const adjusted = await adjustCreditsByCommand(await services(), target(v), {
        meter: str(v, "meter"),
        amount: -positive("amount", str(v, "amount")),
        note: str(v, "note"),
      });
      return { json: adjusted, text: adjustedText(adjusted, str(v, "email")) };
    },
  },
  "admin credits list": {
    summary: "A customer's credits ledger for a tool, newest first: packs bought and hand adjustments.",
    usage: "warden admin credits list --workspace S --env test|live --tool T --email E",
    options: { ...targetOptions },
    required: ["workspace", "env", "tool", "email"],
    async run({ values: v, services }) {
      const { listCreditsByCommand } = await import("../usage/credits.service.js");
      const { data } = await listCreditsByCommand(await services(), target(v));
      return {
        json: data,
        text: listText(
          "No credits.",
          ["CREATED", "METER", "AMOUNT", "REMAINING", "EXPIRES", "SOURCE", "NOTE"],
          data.map((e: CreditLedgerEntry) => [
            minute(Date.parse(e.created_at)),
            e.meter,
            String(e.amount),
            String(e.remaining),
            e.expires_at === null ? "-" : minute(Date.parse(e.expires_at)),
            e.source === "pack" ? `pack ${e.licence}` : "adjustment",
            e.note ?? "",
          ]),
        ),
      };
    },
  },
};
