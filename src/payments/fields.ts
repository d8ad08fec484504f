// Reading a processor's JSON field by field rather than trusting it to a type: what every
// processor adapter shares (Stripe's in stripe/stripe-objects.ts, Paddle's in
// paddle/paddle-objects.ts), and Warden's own metadata that each carries on its checkout.
import type { ProductKind } from "../db/schema.js";

export type Obj = Record<string, unknown>;

export type Problem = { problem: string };

export const isProblem = (v: object): v is Problem => "problem" in v;

/**
 * A field that is present but unusable: a string with control characters (PostgreSQL
 * refuses NUL in text), a number that is not a whole amount or time in range (`1e300`
 * overflows a bigint), a value of the wrong type. Thrown by the field readers and turned
 * into a Problem at each exported reader, so malformed processor data is acknowledged
 * with its reason rather than failing in storage with a 500 that the processor retries for days.
 */
export class MalformedField extends Error {}

export const guarded = <T>(read: () => T): T | Problem => {
  try {
    return read();
  } catch (error) {
    if (error instanceof MalformedField) return { problem: error.message };
    throw error;
  }
};

/** The value as JSON, cut short: safe to log and store (JSON escapes control characters). */
export const shown = (v: unknown) => {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
};
export const absent = (v: unknown) => v === undefined || v === null;
// C0 controls and DEL: never in an id, an address, a status or Warden's metadata.
const CONTROL = /[\u0000-\u001f\u007f]/;

export const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
export const text = (key: string, v: unknown): string | null => {
  if (absent(v) || v === "") return null;
  if (typeof v !== "string") throw new MalformedField(`${key} ${shown(v)} is not text`);
  if (CONTROL.test(v)) throw new MalformedField(`${key} ${shown(v)} contains control characters`);
  return v;
};
export const str = (o: Obj, key: string): string | null => text(key, o[key]);
export const whole = (o: Obj, key: string, max: number, what: string): number | null => {
  const v = o[key];
  if (absent(v)) return null;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0 || v > max) throw new MalformedField(`${key} ${shown(v)} is not ${what}`);
  return v;
};
export const obj = (o: Obj, key: string): Obj | null => (isObj(o[key]) ? (o[key] as Obj) : null);

/** What Warden puts on the processor's checkout and the subscription it creates. */
export interface WardenMetadata {
  productKind: ProductKind;
  productId: string;
  planId: string | null;
  seats: number | null;
  /** The signed-in buyer's person id. */
  accountPersonId: string | null;
}

export function readWardenMetadata(metadata: unknown): WardenMetadata | Problem {
  return guarded(() => {
    const m = isObj(metadata) ? metadata : {};
    const tool = str(m, "warden_tool");
    const bundle = str(m, "warden_bundle");
    if (tool === null && bundle === null) return { problem: "no warden_tool or warden_bundle metadata (not a checkout Warden created)" };
    if (tool !== null && bundle !== null) return { problem: "both warden_tool and warden_bundle metadata" };
    const rawSeats = str(m, "warden_seats");
    let seats: number | null = null;
    if (rawSeats !== null) {
      if (!/^[1-9]\d{0,5}$/.test(rawSeats)) return { problem: `warden_seats ${shown(rawSeats)} is not a whole number of seats` };
      seats = Number(rawSeats);
    }
    return {
      productKind: tool !== null ? "tool" : "bundle",
      productId: (tool ?? bundle) as string,
      planId: str(m, "warden_plan"),
      seats,
      accountPersonId: str(m, "warden_account"),
    };
  });
}
