import type { ProductKind } from "../db/schema.js";

export interface Owner {
  id: string;
  email: string;
  suspendedAt: number | null;
  createdAt: number;
}

export type ServicePlan = "hobby" | "pro";

export interface Workspace {
  id: string;
  slug: string;
  name: string;
  plan: ServicePlan;
  createdAt: number;
}

export interface Tool {
  id: string;
  name: string;
  /** Days of the trial a signed-in person may start once; 0 offers none. */
  trialDays: number;
  createdAt: number;
}

export interface Bundle {
  id: string;
  name: string;
  toolIds: string[];
  createdAt: number;
}

export interface Plan {
  productKind: ProductKind;
  productId: string;
  id: string;
  name: string;
  billing: "one_time" | "subscription";
  amountCents: number | null;
  currency: string;
  interval: "month" | "year" | null;
  isDefault: boolean;
  createdAt: number;
  /** When it stopped being offered at checkout; null while it is offered. Kept for what was bought with it. */
  retiredAt: number | null;
  /** False for a credit pack sold alone: buying it adds credits and gives no access to the tool. */
  givesAccess: boolean;
}
