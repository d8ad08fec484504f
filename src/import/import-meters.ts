// What a source's line of an import says of its person's meters (issue 46): `used` this
// period and `credits` left, checked against the meters its product's tools declare; and
// the credits a licence of a credit pack brings when the line does not say. A part of the
// first pass (import.check.ts), which keeps what later lines reuse: each tool's meters,
// and each pack plan's terms, read once.
import type { Executor } from "../db/database.js";
import type { Env, ProductKind } from "../db/schema.js";
import { newId } from "../ids.js";
import { type PackPurchase, packCreditRows } from "../usage/credits.service.js";
import type { CreditRow } from "../usage/credits.store.js";
import { findPlanTerms, listMeters } from "../usage/terms.store.js";
import type { PlanTerms } from "../usage/usage.types.js";

/** The tool or bundle a line names, with the tools it covers. */
export interface MeteredProduct {
  kind: ProductKind;
  id: string;
  toolIds: string[];
}

/** A source's counters a line carries: units used of its allowance this period, per tool and meter. */
export interface UsedWrite {
  toolId: string;
  meterId: string;
  bucket: string;
  periodStart: number;
  periodEnd: number;
  used: number;
}

/** What a source's line writes of the person's meters with it (its person filled in when written). */
export interface MeterWrites {
  used: UsedWrite[];
  credits: Omit<CreditRow, "personId">[];
}

/** Where the check notes a line's problems, and reads its times. */
export interface LineProblems {
  bad(message: string): void;
  optionalTime(field: string, value: string | null | undefined): number | null;
}

/** The meter fields a source's line may carry. */
interface MeterFields {
  used?: Record<string, number>;
  credits?: Record<string, { amount: number; expires_at?: string | null; note?: string | null }>;
}

/** A licence's line as its pack's credits need it. */
interface PackLine {
  id: string;
  status: string;
  purchasedAt: number;
  planId: string | null;
  /** The line says what is left itself, or is a seat (its team purchase brought them to its buyer). */
  ownCredits: boolean;
}

export class LineMeters {
  /** The meters each tool declares. */
  private readonly meters = new Map<string, Set<string>>();
  /** A one-time plan's terms per tool it covers, by `kind:product:plan`: the credits its licences bring. */
  private readonly planTerms = new Map<string, { toolId: string; terms: PlanTerms }[]>();

  constructor(
    private readonly ex: Executor,
    private readonly workspaceId: string,
    private readonly env: Env,
    private readonly now: number,
  ) {}

  /**
   * A source's `used` and `credits`: every meter its product's tool declares, each credit's
   * expiry a readable time; a team purchase entitles nobody, so it has no allowance to have used.
   */
  async check(line: MeterFields, product: MeteredProduct | null, teamPurchase: boolean, problems: LineProblems): Promise<void> {
    if (line.used === undefined && line.credits === undefined) return;
    if (teamPurchase && line.used !== undefined && Object.keys(line.used).length > 0) {
      problems.bad("a team purchase entitles its buyer to nothing, so it has no allowance to have used: give used on its seats' lines");
    }
    if (!product) return;
    for (const toolId of product.toolIds) {
      if (!this.meters.has(toolId)) this.meters.set(toolId, new Set((await listMeters(this.ex, this.workspaceId, toolId)).map((m) => m.id)));
    }
    for (const [field, meters] of [
      ["used", line.used],
      ["credits", line.credits],
    ] as const) {
      for (const meterId of Object.keys(meters ?? {})) {
        const found = this.meterTool(product, meterId);
        if ("problem" in found) problems.bad(`${field}: ${found.problem}`);
      }
    }
    for (const [meterId, credit] of Object.entries(line.credits ?? {})) problems.optionalTime(`credits.${meterId}.expires_at`, credit.expires_at);
  }

  /** The credits a licence of a one-time plan brings, read once per plan. */
  async loadPlanTerms(product: MeteredProduct, planId: string): Promise<void> {
    const key = `${product.kind}:${product.id}:${planId}`;
    if (this.planTerms.has(key)) return;
    const plan = { productKind: product.kind, productId: product.id, planId };
    const terms = [];
    for (const toolId of product.toolIds) terms.push({ toolId, terms: await findPlanTerms(this.ex, this.workspaceId, plan, toolId) });
    this.planTerms.set(key, terms);
  }

  /** The one tool of the product that declares the meter, or what is wrong. */
  private meterTool(product: MeteredProduct, meterId: string): { toolId: string } | { problem: string } {
    const tools = product.toolIds.filter((toolId) => this.meters.get(toolId)?.has(meterId));
    if (tools.length === 1) return { toolId: tools[0] as string };
    if (tools.length > 1)
      return { problem: `meter "${meterId}" is declared by tools ${tools.join(", ")} of bundle "${product.id}", so the line cannot say which` };
    const declared = product.toolIds.flatMap((toolId) => [...(this.meters.get(toolId) ?? [])]);
    return {
      problem: `${product.kind} "${product.id}" declares no meter "${meterId}"${declared.length === 0 ? " (it declares none)" : `: it declares ${declared.join(", ")}`}`,
    };
  }

  /**
   * A source's `used` in its current period (its own bucket, as heldTerms names it) and
   * `credits` (a licence's are the licence's, so a refund takes back what is left).
   */
  writes(
    line: MeterFields,
    product: MeteredProduct,
    source: { bucket: string; periodStart: number; periodEnd: number; licenceId: string | null },
  ): MeterWrites {
    const toolOf = (meterId: string): string => {
      const found = this.meterTool(product, meterId);
      if ("problem" in found) throw new Error(`a line naming meter ${meterId} passed the check: ${found.problem}`);
      return found.toolId;
    };
    return {
      used: Object.entries(line.used ?? {})
        .filter(([, used]) => used > 0)
        .map(([meterId, used]) => ({
          toolId: toolOf(meterId),
          meterId,
          bucket: source.bucket,
          periodStart: source.periodStart,
          periodEnd: source.periodEnd,
          used,
        })),
      credits: Object.entries(line.credits ?? {}).map(([meterId, credit]) => ({
        id: newId("cr"),
        workspaceId: this.workspaceId,
        env: this.env,
        toolId: toolOf(meterId),
        meterId,
        licenceId: source.licenceId,
        amount: credit.amount,
        remaining: credit.amount,
        expiresAt: credit.expires_at ? Date.parse(credit.expires_at) : null,
        note: credit.note ?? null,
        createdAt: this.now,
      })),
    };
  }

  /**
   * A licence's credits: its pack's, as a purchase would add them, unless the line says
   * what is left (docs/decisions.md, Import); none left of a licence refunded before the
   * move (the refund took them, as a refund here does; the ledger keeps what was bought).
   */
  licenceCredits(writes: MeterWrites, product: MeteredProduct, line: PackLine): MeterWrites {
    const packTerms = line.planId === null ? undefined : this.planTerms.get(`${product.kind}:${product.id}:${line.planId}`);
    let credits = writes.credits;
    if (!line.ownCredits && packTerms) {
      const pack: PackPurchase = {
        id: line.id,
        workspaceId: this.workspaceId,
        env: this.env,
        personId: "",
        productKind: product.kind,
        productId: product.id,
        planId: line.planId,
        purchasedAt: line.purchasedAt,
      };
      credits = packCreditRows(pack, packTerms, this.now).map(({ personId: _written, ...row }) => row);
    }
    if (line.status === "revoked") credits = credits.map((row) => ({ ...row, remaining: 0 }));
    return { ...writes, credits };
  }
}
