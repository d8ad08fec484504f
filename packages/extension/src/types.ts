// The client API's answers as the library hands them on: the API's own JSON, unchanged
// (docs/api.md, "The client API"; the OpenAPI document's tag Client).

export interface DeviceInfo {
  /** A name the person recognises, e.g. "Chrome on macOS". */
  name: string;
  /** e.g. chrome-mac, firefox-windows. */
  platform: string;
}

export interface Device {
  id: string;
  tool: string;
  name: string;
  platform: string | null;
  created_at: string;
  last_active_at: string | null;
  /** The device making the request. */
  current: boolean;
}

export interface SignInSent {
  sent: true;
  /** When the mailed code stops working (ISO 8601). */
  expires_at: string;
}

export interface SignedIn {
  email: string;
  device: Device;
}

export interface Grant {
  id: string;
  tool: string;
  email: string;
  kind: "grant" | "trial";
  starts_at: string;
  ends_at: string | null;
  revoked_at: string | null;
  note: string | null;
  created_at: string;
  live: boolean;
}

export interface Purchase {
  id: string;
  kind: "licence" | "subscription";
  product: string;
  product_kind: "tool" | "bundle";
  plan: string | null;
  status: string;
  purchased_at: string;
  period_end: string | null;
  seats: number | null;
  seats_in_use: number | null;
  team: string | null;
  /** The licence key that activates a device without signing in. */
  key: string | null;
}

export interface Seat {
  id: string;
  email: string;
  assigned_at: string;
}

export interface SeatList {
  purchase: string;
  seats: number;
  seats_in_use: number;
  data: Seat[];
}

export interface SeatChange {
  seat: string;
  purchase: string;
  email: string;
  status: "active" | "revoked";
  seats: number;
  seats_in_use: number;
}

/** One allowance a spend draws from, in draw order (docs/api.md, "MeterUsage"). */
export interface UsageBucket {
  via: "licence" | "subscription" | "trial" | "grant" | "free";
  /** The source's id (lic_…, sub_…, gr_…); null for the tool's free allowance. */
  source: string | null;
  allowance: number;
  used: number;
  period_start: string;
  resets_at: string;
}

/** One meter of the person: the allowances this period, credits, and what a spend may take. */
export interface MeterUsage {
  meter: string;
  /** What a unit is called, plural (e.g. "summaries"). */
  unit: string;
  /** Units used of the allowances this period (credits spent are not counted here). */
  used: number;
  allowance: number;
  allowance_remaining: number;
  /** Credits available now. */
  credits: number;
  /** What a spend may take: allowance_remaining + credits. */
  remaining: number;
  /** The soonest reset of an allowance (ISO 8601); null when there is none. */
  resets_at: string | null;
  period_start: string | null;
  buckets: UsageBucket[];
}

/** A spend applied: the quantity, and the meter's usage after it. */
export interface Spent extends MeterUsage {
  quantity: number;
  allowed: true;
}
