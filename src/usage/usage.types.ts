// The vocabulary of usage: what a tool declares (features, meters) and what a plan's
// terms give for it. Types only, shared by every layer.

export interface Feature {
  id: string;
  name: string;
  createdAt: number;
}

export interface Meter {
  id: string;
  name: string;
  /** What one unit is called, plural as a person reads it: "summaries". */
  unit: string;
  /** Units each calendar month (UTC) for a person who holds nothing; null offers none. */
  freeAllowance: number | null;
  createdAt: number;
}

/** A meter as the access answers and spends need it. */
export type DeclaredMeter = Pick<Meter, "id" | "name" | "unit" | "freeAllowance">;

/** What a plan gives for one tool it covers. */
export interface PlanTerms {
  /** Feature ids, sorted. */
  features: string[];
  /** Meter id → units per period. */
  allowances: Record<string, number>;
  /** Meter id → credits each purchase adds (a credit pack). */
  credits: Record<string, number>;
  /** Days a pack's credits last from the purchase; null: until spent. */
  creditsExpireDays: number | null;
}

/** The part of a plan's terms a source carries into an access answer. */
export type HeldPlanTerms = Pick<PlanTerms, "features" | "allowances">;

export const NO_TERMS: HeldPlanTerms = { features: [], allowances: {} };

/** What a tool declares, and its top terms: what a trial, a grant without a plan, or a purchase without a plan gives. */
export interface ToolTerms {
  features: string[];
  meters: DeclaredMeter[];
  /** Every feature, and per meter the largest allowance any live plan covering the tool gives. */
  top: HeldPlanTerms;
}
