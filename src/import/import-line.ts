// A line of an import file: its JSON against import-line.schema.json (the contract), and
// the shape of a line the schema accepted. The first thing each pass does with a line.
import { Ajv2020, type ErrorObject, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { LicenceStatus } from "../billing/licence.store.js";
import type { SubscriptionStatus } from "../billing/subscription.store.js";
import lineSchema from "./import-line.schema.json" with { type: "json" };

// Compiled on the first line read, not when the module loads: compiling takes about half
// a second, which every `warden` command paid at start before (the import's module is
// reached from the services every command opens).
let compiled: ValidateFunction<ImportLine> | null = null;
function validator(): ValidateFunction<ImportLine> {
  if (compiled === null) {
    const ajv = new Ajv2020({ allErrors: false, verbose: true });
    addFormats.default(ajv);
    compiled = ajv.compile<ImportLine>(lineSchema);
  }
  return compiled;
}

/** Credits a line carries for one meter. */
export interface CreditsField {
  amount: number;
  expires_at?: string | null;
  note?: string | null;
}

/** What a source's line may carry of the person's meters: used this period, and credits left. */
interface MeterFields {
  used?: Record<string, number>;
  credits?: Record<string, CreditsField>;
}

// The shape of a line once the schema has accepted it (import-line.schema.json is the contract).
export interface AccountLine {
  type: "account";
  email: string;
  signed_in_at: string;
  tools?: string[];
}
export interface DeviceLine {
  type: "device";
  email: string;
  tool: string;
  name: string;
  platform?: string | null;
  created_at: string;
  last_active_at?: string | null;
  signed_out_at?: string | null;
  licence?: string | null;
}
export interface LicenceLine extends MeterFields {
  type: "licence";
  id?: string;
  email: string;
  tool?: string;
  bundle?: string;
  plan?: string | null;
  status?: LicenceStatus;
  purchased_at: string;
  amount_cents?: number | null;
  currency?: string | null;
  payment_intent?: string | null;
  checkout_session?: string | null;
  seats?: number;
  team_licence?: string;
  team_subscription?: string;
}
export interface SubscriptionLine extends MeterFields {
  type: "subscription";
  id: string;
  email: string;
  tool?: string;
  bundle?: string;
  plan?: string | null;
  status: SubscriptionStatus;
  started_at?: string;
  current_period_start: string;
  current_period_end: string;
  cancel_at_period_end?: boolean;
  cancel_at?: string | null;
  ended_at?: string | null;
  seats?: number;
}
export interface GrantLine extends MeterFields {
  type: "trial" | "grant";
  email: string;
  tool: string;
  starts_at: string;
  ends_at?: string | null;
  revoked_at?: string | null;
  note?: string | null;
  /** A grant's plan (the schema has none for a trial). */
  plan?: string | null;
}
export type ImportLine = AccountLine | DeviceLine | LicenceLine | SubscriptionLine | GrantLine;

export interface LineProblem {
  /** 1-based, counting blank lines, as an editor shows it. */
  line: number;
  message: string;
}

function describeSchemaErrors(errors: readonly ErrorObject[], lineType: unknown): string {
  // Cross-field rules (exactly one of tool or bundle, what a seat may not carry) carry
  // their own explanation as the description of the failing schema node.
  const explained = errors.find((e) => (e.keyword === "oneOf" || e.keyword === "not") && typeof e.parentSchema?.description === "string");
  if (explained) return explained.parentSchema?.description as string;
  const error = errors.find((e) => e.keyword !== "if") ?? errors[0];
  if (!error) return "does not match the import format";
  const field = error.instancePath.slice(1).replaceAll("/", ".");
  switch (error.keyword) {
    case "required":
      return `missing field "${error.params.missingProperty}"`;
    case "additionalProperties":
      return `unknown field "${error.params.additionalProperty}" for a ${String(lineType)} line`;
    case "enum":
      return `${field} must be one of ${(error.params.allowedValues as unknown[]).join(", ")}`;
    case "format":
      return `${field} must be an ISO 8601 date-time with a time zone, such as 2026-11-21T12:00:00.000Z`;
    case "pattern": {
      // A key of an object (a meter id in `used` or `credits`) is named, as its value has no path of its own.
      const what = error.propertyName === undefined ? field : `${field} key "${error.propertyName}"`;
      return typeof error.parentSchema?.description === "string" ? `${what} is not valid: ${error.parentSchema.description}` : `${what} ${error.message}`;
    }
    case "type":
      return field === "" ? "a line must be a JSON object" : `${field} must be ${String(error.params.type).replace(",", " or ")}`;
    default:
      return `${field} ${error.message}`;
  }
}

/** A line's JSON against the format: the value, or what is wrong with it. */
export function parseLine(text: string): { value: ImportLine } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { problem: `not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  const validateLine = validator();
  if (!validateLine(value)) {
    const lineType = typeof value === "object" && value !== null && "type" in value ? value.type : undefined;
    return { problem: describeSchemaErrors(validateLine.errors ?? [], lineType) };
  }
  return { value };
}
