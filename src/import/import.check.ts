// The first pass of an import: every line against import-line.schema.json (import-line.ts),
// then against the workspace, what is stored (stored-state.ts) and the lines before it.
// What it keeps across lines is only what later lines can refer to (licence and
// subscription ids, team purchases, one account and one trial per person, the catalogue),
// so a file of a million grants holds little more than one batch. It also decides which
// lines are stored already as they are (a second import of the same file), which the
// second pass then skips.
import { countSeats, findLicenceById, type Licence } from "../billing/licence.store.js";
import { findSubscription, type Subscription } from "../billing/subscription.store.js";
import { toIso } from "../clock.js";
import { toolsOfProduct } from "../customers/customer.service.js";
import type { Device } from "../customers/device.store.js";
import { isEmailShape, normaliseEmail } from "../customers/email.js";
import type { Person } from "../customers/person.store.js";
import type { Executor } from "../db/database.js";
import type { Env, ProductKind } from "../db/schema.js";
import type { StoredGrant } from "../grants/grant.store.js";
import { newId } from "../ids.js";
import { utcMonthOf } from "../usage/held-terms.js";
import { bundleExists, findPlan, findTool } from "../workspaces/workspace.store.js";
import type { AccountLine, DeviceLine, GrantLine, ImportLine, LicenceLine, LineProblem, SubscriptionLine } from "./import-line.js";
import { LineMeters, type LineProblems, type MeterWrites } from "./import-meters.js";
import type { StoredState } from "./stored-state.js";

interface Product {
  kind: ProductKind;
  id: string;
  toolIds: string[];
}

/** A team purchase that seats can refer to: on an earlier line or stored. */
interface Team {
  product: Product;
  planId: string | null;
  seats: number;
  seatsInUse: number;
}

/** What one line writes; the person is found or created from `email` when it is written. */
export type Write =
  | { kind: "account"; email: string; signedInAt: number; toolIds: string[] }
  | { kind: "device"; email: string; device: Omit<Device, "workspaceId" | "env" | "personId"> }
  | { kind: "licence"; email: string; licence: Omit<Licence, "workspaceId" | "env" | "personId">; toolIds: string[]; meters: MeterWrites }
  | {
      kind: "subscription";
      email: string;
      subscription: Omit<Subscription, "workspaceId" | "env" | "personId">;
      toolIds: string[];
      meters: MeterWrites;
    }
  | { kind: "grant"; email: string; grant: Omit<StoredGrant, "email" | "personId">; meters: MeterWrites };

const isSeat = (line: LicenceLine): boolean => line.team_licence !== undefined || line.team_subscription !== undefined;

/** One bit per line number: the lines found stored already as they are. */
export class LineSet {
  private bits = new Uint8Array(1024);
  size = 0;

  add(line: number): void {
    if (line >> 3 >= this.bits.length) {
      const grown = new Uint8Array(Math.max(this.bits.length * 2, (line >> 3) + 1));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[line >> 3] = (this.bits[line >> 3] ?? 0) | (1 << (line & 7));
    this.size += 1;
  }

  has(line: number): boolean {
    return ((this.bits[line >> 3] ?? 0) & (1 << (line & 7))) !== 0;
  }
}

/** A field of a stored row and of a line, named as in the file. */
type Field = readonly [name: string, stored: unknown, line: unknown];

/** How a stored row differs from a line: its first field, in this order, that does; null when none does. */
function difference(fields: readonly Field[]): string | null {
  const found = fields.find(([, stored, line]) => stored !== line);
  if (!found) return null;
  const [name, stored, line] = found;
  if (name === "person") return "for another person";
  const show = (v: unknown) => (v === null || v === undefined ? "none" : typeof v === "number" && name.endsWith("_at") ? toIso(v) : String(v));
  return `with ${name} ${show(stored)}, not ${show(line)}`;
}

/** Of the stored rows with a line's identity, one identical to it (null), or how the first differs. */
function compare<T>(candidates: readonly T[], fields: (stored: T) => readonly Field[]): string | null | undefined {
  if (candidates.length === 0) return undefined;
  const differences = candidates.map((c) => difference(fields(c)));
  return differences.includes(null) ? null : differences[0];
}

/**
 * Checks lines against the workspace and what is stored, in file order, so that a seat
 * can refer to a team purchase on an earlier line. A line with a problem still registers
 * what it defines, so that one mistake is not reported again on every line that refers
 * to it. Identity of a line already stored: a licence or subscription by its id, a
 * licence without one by its person, product (or team) and purchase time, a grant by its
 * person, tool and start, a trial by its person and tool, a device by its person, tool,
 * name and creation time. Such a line identical to what is stored is unchanged; one that
 * differs is a bad line, for an import never overwrites.
 */
export class FileCheck {
  readonly problems: LineProblem[] = [];
  /** Lines with a problem, all counted, though only the first problems are kept. */
  badLines = 0;
  readonly unchanged = new LineSet();
  private line = 0;
  private lineHadProblem = false;
  private stored: StoredState | null = null;
  private readonly products = new Map<string, Product | null>();
  private readonly plans = new Map<string, Awaited<ReturnType<typeof findPlan>>>();
  private readonly accounts = new Map<string, number>();
  /** Line of each licence id given in the file. */
  private readonly licences = new Map<string, number>();
  private readonly subscriptions = new Map<string, number>();
  private readonly teams = new Map<string, Team | null>();
  /** Line of each trial by normalised address and tool: a person has one trial per tool. */
  private readonly trials = new Map<string, number>();
  /** What lines say of their person's meters. */
  private readonly lineMeters: LineMeters;
  private readonly problemsOfLine: LineProblems = { bad: (message) => this.bad(message), optionalTime: (field, value) => this.optionalTime(field, value) };

  constructor(
    private readonly ex: Executor,
    private readonly workspaceId: string,
    private readonly env: Env,
    private readonly now: number,
    private readonly maxProblems: number,
  ) {
    this.lineMeters = new LineMeters(ex, workspaceId, env, now);
  }

  /** A line the schema refused. */
  refuse(line: number, message: string): void {
    this.line = line;
    this.lineHadProblem = false;
    this.bad(message);
  }

  private bad(message: string): void {
    if (!this.lineHadProblem) this.badLines += 1;
    this.lineHadProblem = true;
    if (this.problems.length < this.maxProblems) this.problems.push({ line: this.line, message });
  }

  /** Checks one batch of lines that the schema accepted, with what is stored about them. */
  async checkBatch(lines: readonly { line: number; value: ImportLine }[], stored: StoredState): Promise<void> {
    this.stored = stored;
    for (const { line, value } of lines) await this.check(line, value);
    this.stored = null;
  }

  private async check(line: number, value: ImportLine): Promise<void> {
    this.line = line;
    this.lineHadProblem = false;
    this.email(value.email);
    let unchanged: boolean;
    switch (value.type) {
      case "account":
        unchanged = await this.account(value);
        break;
      case "device":
        unchanged = await this.device(value);
        break;
      case "licence":
        unchanged = await this.licence(value);
        break;
      case "subscription":
        unchanged = await this.subscription(value);
        break;
      case "trial":
      case "grant":
        unchanged = await this.grant(value);
        break;
    }
    if (unchanged && !this.lineHadProblem) this.unchanged.add(line);
  }

  private storedPerson(email: string): Person | null {
    return this.stored?.people.get(normaliseEmail(email)) ?? null;
  }

  private email(email: string): void {
    if (!isEmailShape(email)) this.bad(`email "${email}" is not an email address such as person@example.com`);
  }

  private time(field: string, value: string): number {
    const ms = Date.parse(value);
    // The schema's date-time admits a leap second, which Date cannot hold.
    if (!Number.isFinite(ms)) this.bad(`${field} "${value}" is not a time this service can read; write it like 2026-11-21T12:00:00.000Z`);
    return ms;
  }

  private optionalTime(field: string, value: string | null | undefined): number | null {
    return value === undefined || value === null ? null : this.time(field, value);
  }

  private notFuture(field: string, ms: number | null): void {
    if (ms !== null && ms > this.now) this.bad(`${field} ${toIso(ms)} is in the future (now is ${toIso(this.now)})`);
  }

  private notBefore(field: string, ms: number | null, otherField: string, other: number): void {
    if (ms !== null && ms < other) this.bad(`${field} ${toIso(ms)} is before ${otherField} ${toIso(other)}`);
  }

  private async product(kind: ProductKind, id: string): Promise<Product | null> {
    const key = `${kind}:${id}`;
    if (!this.products.has(key)) {
      const exists = kind === "tool" ? (await findTool(this.ex, this.workspaceId, id)) !== null : await bundleExists(this.ex, this.workspaceId, id);
      this.products.set(key, exists ? { kind, id, toolIds: await toolsOfProduct(this.ex, this.workspaceId, kind, id) } : null);
    }
    const product = this.products.get(key) ?? null;
    if (!product) this.bad(`no ${kind} "${id}" in this workspace`);
    return product;
  }

  private async productOf(line: { tool?: string; bundle?: string }): Promise<Product | null> {
    return line.bundle !== undefined ? this.product("bundle", line.bundle) : this.product("tool", line.tool ?? "");
  }

  private async plan(product: Product, planId: string | null | undefined, billing: "one_time" | "subscription"): Promise<string | null> {
    if (planId === undefined || planId === null) return null;
    const key = `${product.kind}:${product.id}:${planId}`;
    if (!this.plans.has(key)) this.plans.set(key, await findPlan(this.ex, this.workspaceId, product.kind, product.id, planId));
    const plan = this.plans.get(key);
    if (!plan) this.bad(`no plan "${planId}" for ${product.kind} "${product.id}"`);
    else if (plan.billing !== billing)
      this.bad(`plan "${planId}" is billed ${plan.billing}; a ${billing === "one_time" ? "licence" : "subscription"} needs a ${billing} plan`);
    return planId;
  }

  /** A plan a grant may name: the tool's own, retired ones too, never a credit pack (as the API's grants). */
  private async grantPlan(toolId: string, planId: string | null | undefined): Promise<string | null> {
    if (planId === undefined || planId === null) return null;
    const key = `tool:${toolId}:${planId}`;
    if (!this.plans.has(key)) this.plans.set(key, await findPlan(this.ex, this.workspaceId, "tool", toolId, planId));
    const plan = this.plans.get(key);
    if (!plan) this.bad(`no plan "${planId}" for tool "${toolId}"`);
    else if (!plan.givesAccess) this.bad(`plan "${planId}" is a credit pack: it gives no access, so a grant cannot name it`);
    return planId;
  }

  private async account(line: AccountLine): Promise<boolean> {
    const signedInAt = this.time("signed_in_at", line.signed_in_at);
    this.notFuture("signed_in_at", signedInAt);
    const earlier = this.accounts.get(normaliseEmail(line.email));
    if (earlier !== undefined) this.bad(`the account of ${line.email} is already on line ${earlier}; list all its tools on one line`);
    else this.accounts.set(normaliseEmail(line.email), this.line);
    const toolIds = line.tools ?? [];
    for (const toolId of toolIds) await this.product("tool", toolId);
    // Signing in again changes nothing: the first sign-in and the earliest `since` are kept.
    const person = this.storedPerson(line.email);
    if (!person || person.signedInAt === null || person.signedInAt > signedInAt) return false;
    const tools = this.stored?.signedInTools.get(person.id);
    return toolIds.every((toolId) => (tools?.get(toolId) ?? Number.POSITIVE_INFINITY) <= signedInAt);
  }

  private async device(line: DeviceLine): Promise<boolean> {
    await this.product("tool", line.tool);
    const createdAt = this.time("created_at", line.created_at);
    const lastActiveAt = this.optionalTime("last_active_at", line.last_active_at);
    const signedOutAt = this.optionalTime("signed_out_at", line.signed_out_at);
    this.notFuture("created_at", createdAt);
    this.notFuture("last_active_at", lastActiveAt);
    this.notFuture("signed_out_at", signedOutAt);
    this.notBefore("last_active_at", lastActiveAt, "created_at", createdAt);
    this.notBefore("signed_out_at", signedOutAt, "created_at", createdAt);
    const licenceId = line.licence ?? null;
    if (licenceId !== null && !this.licences.has(licenceId)) {
      const stored = this.stored?.licencesById.get(licenceId);
      if (!stored || stored.workspaceId !== this.workspaceId || stored.env !== this.env) {
        this.bad(`licence ${licenceId} is neither on an earlier line nor stored in this environment`);
      }
    }
    const person = this.storedPerson(line.email);
    const same = (person ? this.stored?.devicesOf.get(person.id) : undefined)?.filter(
      (d) => d.toolId === line.tool && d.name === line.name && d.createdAt === createdAt,
    );
    // Its activity and signing out are the service's to record from then on.
    const differs = compare(same ?? [], (d) => [
      ["platform", d.platform, line.platform ?? null],
      ["licence", d.licenceId, licenceId],
    ]);
    if (differs) this.bad(`the device "${line.name}" of ${line.email} created ${toIso(createdAt)} exists already ${differs}`);
    return differs !== undefined;
  }

  private async team(field: "team_licence" | "team_subscription", id: string): Promise<Team | null> {
    const key = `${field}:${id}`;
    if (!this.teams.has(key)) {
      const scope = { workspaceId: this.workspaceId, env: this.env };
      const stored =
        field === "team_licence"
          ? await findLicenceById(this.ex, id).then((l) => (l && l.workspaceId === this.workspaceId && l.env === this.env ? l : null))
          : await findSubscription(this.ex, scope, id);
      let team: Team | null = null;
      if (stored && (stored.seats ?? 0) > 0) {
        team = {
          product: {
            kind: stored.productKind,
            id: stored.productId,
            toolIds: await toolsOfProduct(this.ex, this.workspaceId, stored.productKind, stored.productId),
          },
          planId: stored.planId,
          seats: stored.seats ?? 0,
          seatsInUse: await countSeats(this.ex, scope, field === "team_licence" ? { teamLicenceId: id } : { teamSubscriptionId: id }),
        };
      }
      this.teams.set(key, team);
    }
    const team = this.teams.get(key) ?? null;
    if (!team) {
      const what = field === "team_licence" ? "team licence (a licence with seats)" : "team subscription (a subscription with seats)";
      this.bad(`${field} ${id} is not a ${what} on an earlier line or stored in this environment`);
    }
    return team;
  }

  /** A licence line's product once the check has read it: its team's for a seat. */
  private licenceProduct(line: LicenceLine): Product | undefined {
    const team =
      line.team_licence !== undefined
        ? this.teams.get(`team_licence:${line.team_licence}`)
        : line.team_subscription !== undefined
          ? this.teams.get(`team_subscription:${line.team_subscription}`)
          : undefined;
    return team ? team.product : (this.products.get(line.bundle !== undefined ? `bundle:${line.bundle}` : `tool:${line.tool}`) ?? undefined);
  }

  /** The licence a line describes; its id is a placeholder when the line gives none. */
  private async licenceOf(line: LicenceLine): Promise<{ licence: Omit<Licence, "workspaceId" | "env" | "personId">; toolIds: string[] } | null> {
    const purchasedAt = this.time("purchased_at", line.purchased_at);
    const teamField = line.team_licence !== undefined ? "team_licence" : line.team_subscription !== undefined ? "team_subscription" : null;
    let product: Product | null;
    let planId: string | null;
    if (teamField) {
      const team = await this.team(teamField, line.team_licence ?? line.team_subscription ?? "");
      if (!team) return null;
      product = team.product;
      planId = team.planId;
    } else {
      product = await this.productOf(line);
      if (!product) return null;
      planId = await this.plan(product, line.plan, "one_time");
    }
    return {
      toolIds: product.toolIds,
      licence: {
        id: line.id ?? "",
        productKind: product.kind,
        productId: product.id,
        planId,
        status: line.status ?? "active",
        purchasedAt,
        amountCents: line.amount_cents ?? null,
        currency: line.currency?.toLowerCase() ?? null,
        paymentIntent: line.payment_intent ?? null,
        checkoutSession: line.checkout_session ?? null,
        seats: line.seats ?? null,
        teamLicenceId: line.team_licence ?? null,
        teamSubscriptionId: line.team_subscription ?? null,
        createdAt: purchasedAt,
      },
    };
  }

  private async licence(line: LicenceLine): Promise<boolean> {
    const described = await this.licenceOf(line);
    if (described) this.notFuture("purchased_at", described.licence.purchasedAt);
    const product = described ? this.licenceProduct(line) : undefined;
    await this.lineMeters.check(line, product ?? null, line.seats !== undefined, this.problemsOfLine);
    // A licence of a plan that gives credits brings them unless the line says what is left
    // (docs/decisions.md, Import); a seat's team purchase brought them to its buyer.
    const planId = described?.licence.planId ?? null;
    if (product && planId !== null && line.credits === undefined && !isSeat(line)) await this.lineMeters.loadPlanTerms(product, planId);

    let stored: Licence[] = [];
    if (line.id !== undefined) {
      const earlier = this.licences.get(line.id);
      if (earlier !== undefined) this.bad(`licence id ${line.id} is already on line ${earlier}`);
      else {
        this.licences.set(line.id, this.line);
        const found = this.stored?.licencesById.get(line.id);
        if (found && (found.workspaceId !== this.workspaceId || found.env !== this.env)) this.bad(`licence id ${line.id} exists already`);
        else if (found) stored = [found];
      }
    } else if (described) {
      const person = this.storedPerson(line.email);
      const l = described.licence;
      stored = ((person ? this.stored?.licencesOf.get(person.id) : undefined) ?? []).filter(
        (s) =>
          s.purchasedAt === l.purchasedAt &&
          s.teamLicenceId === l.teamLicenceId &&
          s.teamSubscriptionId === l.teamSubscriptionId &&
          (l.teamLicenceId !== null || l.teamSubscriptionId !== null || (s.productKind === l.productKind && s.productId === l.productId)),
      );
    }
    if (described && stored.length > 0) {
      const l = described.licence;
      const differs = compare(stored, (s) => [
        ["person", s.personId, this.storedPerson(line.email)?.id],
        ["product", `${s.productKind} ${s.productId}`, `${l.productKind} ${l.productId}`],
        ["team_licence", s.teamLicenceId, l.teamLicenceId],
        ["team_subscription", s.teamSubscriptionId, l.teamSubscriptionId],
        ["plan", s.planId, l.planId],
        ["status", s.status, l.status],
        ["purchased_at", s.purchasedAt, l.purchasedAt],
        ["amount_cents", s.amountCents, l.amountCents],
        ["currency", s.currency, l.currency],
        ["payment_intent", s.paymentIntent, l.paymentIntent],
        ["checkout_session", s.checkoutSession, l.checkoutSession],
        ["seats", s.seats, l.seats],
      ]);
      const named = line.id !== undefined ? `licence id ${line.id}` : `a licence of ${line.email} purchased ${toIso(l.purchasedAt)}`;
      if (differs) this.bad(`${named} exists already ${differs}`);
      return true;
    }
    if (!described) return false;

    const l = described.licence;
    if (l.teamLicenceId !== null || l.teamSubscriptionId !== null) {
      const teamField = l.teamLicenceId !== null ? "team_licence" : "team_subscription";
      const teamId = l.teamLicenceId ?? l.teamSubscriptionId ?? "";
      const team = this.teams.get(`${teamField}:${teamId}`);
      if (team && l.status !== "revoked") {
        if (team.seatsInUse >= team.seats) this.bad(`${teamField} ${teamId} has ${team.seats} seat${team.seats === 1 ? "" : "s"}, all in use`);
        team.seatsInUse += 1;
      }
    } else if (line.seats !== undefined && line.id !== undefined && !this.teams.get(`team_licence:${line.id}`)) {
      this.teams.set(`team_licence:${line.id}`, {
        product: { kind: l.productKind, id: l.productId, toolIds: described.toolIds },
        planId: l.planId,
        seats: line.seats,
        seatsInUse: 0,
      });
    }
    return false;
  }

  private async subscription(line: SubscriptionLine): Promise<boolean> {
    const periodStart = this.time("current_period_start", line.current_period_start);
    const periodEnd = this.time("current_period_end", line.current_period_end);
    const startedAt = line.started_at === undefined ? periodStart : this.time("started_at", line.started_at);
    const cancelAt = this.optionalTime("cancel_at", line.cancel_at);
    const endedAt = this.optionalTime("ended_at", line.ended_at);
    this.notFuture("started_at", startedAt);
    this.notFuture("ended_at", endedAt);
    if (periodEnd <= periodStart) this.bad(`current_period_end ${line.current_period_end} is not after current_period_start ${line.current_period_start}`);
    this.notBefore("current_period_start", periodStart, "started_at", startedAt);
    this.notBefore("ended_at", endedAt, "started_at", startedAt);
    this.notBefore("cancel_at", cancelAt, "started_at", startedAt);

    const earlier = this.subscriptions.get(line.id);
    if (earlier !== undefined) this.bad(`subscription ${line.id} is already on line ${earlier}`);
    else this.subscriptions.set(line.id, this.line);
    const product = await this.productOf(line);
    const planId = product ? await this.plan(product, line.plan, "subscription") : null;
    await this.lineMeters.check(line, product, line.seats !== undefined, this.problemsOfLine);

    const stored = earlier === undefined ? this.stored?.subscriptions.get(line.id) : undefined;
    if (stored) {
      const differs = difference([
        ["person", stored.personId, this.storedPerson(line.email)?.id],
        ["product", `${stored.productKind} ${stored.productId}`, product ? `${product.kind} ${product.id}` : null],
        ["plan", stored.planId, planId],
        ["status", stored.status, line.status],
        ["started_at", stored.createdAt, startedAt],
        ["current_period_start", stored.currentPeriodStart, periodStart],
        ["current_period_end", stored.currentPeriodEnd, periodEnd],
        ["cancel_at_period_end", stored.cancelAtPeriodEnd, line.cancel_at_period_end ?? false],
        ["cancel_at", stored.cancelAt, cancelAt],
        ["ended_at", stored.endedAt, endedAt],
        ["seats", stored.seats, line.seats ?? null],
      ]);
      if (differs) this.bad(`subscription ${line.id} exists already ${differs}`);
      return true;
    }
    if (product && line.seats !== undefined && earlier === undefined) {
      this.teams.set(`team_subscription:${line.id}`, { product, planId, seats: line.seats, seatsInUse: 0 });
    }
    return false;
  }

  private async grant(line: GrantLine): Promise<boolean> {
    const tool = await this.product("tool", line.tool);
    const planId = tool ? await this.grantPlan(line.tool, line.plan) : null;
    await this.lineMeters.check(line, tool, false, this.problemsOfLine);
    const startsAt = this.time("starts_at", line.starts_at);
    const endsAt = this.optionalTime("ends_at", line.ends_at);
    const revokedAt = this.optionalTime("revoked_at", line.revoked_at);
    this.notFuture("starts_at", startsAt);
    this.notFuture("revoked_at", revokedAt);
    if (endsAt !== null && endsAt <= startsAt) this.bad(`ends_at ${toIso(endsAt)} is not after starts_at ${toIso(startsAt)}`);
    this.notBefore("revoked_at", revokedAt, "starts_at", startsAt);

    if (line.type === "trial") {
      const key = `${normaliseEmail(line.email)} ${line.tool}`;
      const earlier = this.trials.get(key);
      if (earlier !== undefined) {
        this.bad(`a second trial of ${line.tool} for ${line.email} (line ${earlier} has one); a person has one trial per tool`);
        return false;
      }
      this.trials.set(key, this.line);
    }
    const person = this.storedPerson(line.email);
    const same = ((person ? this.stored?.grantsOf.get(person.id) : undefined) ?? []).filter(
      (g) => g.toolId === line.tool && g.kind === line.type && (line.type === "trial" || g.startsAt === startsAt),
    );
    const differs = compare(same, (g) => [
      ["starts_at", g.startsAt, startsAt],
      ["ends_at", g.endsAt, endsAt],
      ["revoked_at", g.revokedAt, revokedAt],
      ["note", g.note, line.note ?? null],
      ["plan", g.planId, planId],
    ]);
    if (differs && line.type === "trial") this.bad(`${line.email} has a trial of ${line.tool} already; a person has one trial per tool`);
    else if (differs) this.bad(`a grant of ${line.tool} to ${line.email} from ${toIso(startsAt)} exists already ${differs}`);
    return differs !== undefined;
  }

  /**
   * What a line that passed the check writes (the second pass): from the catalogue and
   * teams the check has read, with new ids for what the line does not name.
   */
  toWrite(value: ImportLine): Write {
    switch (value.type) {
      case "account":
        return { kind: "account", email: value.email, signedInAt: Date.parse(value.signed_in_at), toolIds: value.tools ?? [] };
      case "device":
        return {
          kind: "device",
          email: value.email,
          device: {
            id: newId("dev"),
            toolId: value.tool,
            licenceId: value.licence ?? null,
            name: value.name,
            platform: value.platform ?? null,
            createdAt: Date.parse(value.created_at),
            lastActiveAt: value.last_active_at ? Date.parse(value.last_active_at) : null,
            signedOutAt: value.signed_out_at ? Date.parse(value.signed_out_at) : null,
          },
        };
      case "licence": {
        const team =
          value.team_licence !== undefined
            ? this.teams.get(`team_licence:${value.team_licence}`)
            : value.team_subscription !== undefined
              ? this.teams.get(`team_subscription:${value.team_subscription}`)
              : undefined;
        const product = this.licenceProduct(value);
        if (!product) throw new Error(`line of licence ${value.id ?? ""} passed the check without its product`);
        const purchasedAt = Date.parse(value.purchased_at);
        const id = value.id ?? newId("lic");
        const planId = team ? team.planId : (value.plan ?? null);
        const month = utcMonthOf(this.now);
        const meters = this.lineMeters.licenceCredits(
          this.lineMeters.writes(value, product, { bucket: id, periodStart: month.start, periodEnd: month.end, licenceId: id }),
          product,
          { id, status: value.status ?? "active", purchasedAt, planId, ownCredits: value.credits !== undefined || isSeat(value) },
        );
        return {
          kind: "licence",
          email: value.email,
          toolIds: product.toolIds,
          meters,
          licence: {
            id,
            productKind: product.kind,
            productId: product.id,
            planId,
            status: value.status ?? "active",
            purchasedAt,
            amountCents: value.amount_cents ?? null,
            currency: value.currency?.toLowerCase() ?? null,
            paymentIntent: value.payment_intent ?? null,
            checkoutSession: value.checkout_session ?? null,
            seats: value.seats ?? null,
            teamLicenceId: value.team_licence ?? null,
            teamSubscriptionId: value.team_subscription ?? null,
            createdAt: purchasedAt,
          },
        };
      }
      case "subscription": {
        const product = this.products.get(value.bundle !== undefined ? `bundle:${value.bundle}` : `tool:${value.tool}`);
        if (!product) throw new Error(`line of subscription ${value.id} passed the check without its product`);
        const periodStart = Date.parse(value.current_period_start);
        const periodEnd = Date.parse(value.current_period_end);
        return {
          kind: "subscription",
          email: value.email,
          toolIds: product.toolIds,
          meters: this.lineMeters.writes(value, product, { bucket: value.id, periodStart, periodEnd, licenceId: null }),
          subscription: {
            id: value.id,
            productKind: product.kind,
            productId: product.id,
            planId: value.plan ?? null,
            status: value.status,
            currentPeriodStart: periodStart,
            currentPeriodEnd: periodEnd,
            cancelAtPeriodEnd: value.cancel_at_period_end ?? false,
            cancelAt: value.cancel_at ? Date.parse(value.cancel_at) : null,
            endedAt: value.ended_at ? Date.parse(value.ended_at) : null,
            seats: value.seats ?? null,
            createdAt: value.started_at === undefined ? periodStart : Date.parse(value.started_at),
          },
        };
      }
      case "trial":
      case "grant": {
        const startsAt = Date.parse(value.starts_at);
        const product = this.products.get(`tool:${value.tool}`);
        if (!product) throw new Error(`line of a ${value.type} of ${value.tool} passed the check without its tool`);
        const id = newId("gr");
        const month = utcMonthOf(this.now);
        return {
          kind: "grant",
          email: value.email,
          meters: this.lineMeters.writes(value, product, { bucket: id, periodStart: month.start, periodEnd: month.end, licenceId: null }),
          grant: {
            id,
            toolId: value.tool,
            kind: value.type,
            startsAt,
            endsAt: value.ends_at ? Date.parse(value.ends_at) : null,
            revokedAt: value.revoked_at ? Date.parse(value.revoked_at) : null,
            note: value.note ?? null,
            createdAt: startsAt,
            // Without a plan, the tool's top terms.
            planId: value.plan ?? null,
          },
        };
      }
    }
  }
}
