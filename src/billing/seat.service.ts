// Team seats: the buyer of a team licence or team subscription hands seats out to
// addresses; each holder gets a licence of their own tied to the team purchase (it
// follows the team's status, see customers/entitlement.ts), never more than were bought.
import { isEmailShape } from "../customers/email.js";
import { subscriptionRuns } from "../customers/entitlement.js";
import { ensurePerson, findPersonByEmail } from "../customers/person.store.js";
import { ApiError, invalidParameter, notFound } from "../errors/errors.js";
import { countPassesBeforeAdding } from "../grants/pass.store.js";
import { newId } from "../ids.js";
import type { Services } from "../services.js";
import { findWorkspaceById } from "../workspaces/workspace.store.js";
import { type BillingTx, inBillingTransaction, syncHolders } from "./billing.context.js";
import { findLicenceById, insertLicence, listSeats, type StoredLicence, setLicenceStatus, type Team } from "./licence.store.js";
import { requireSubscription } from "./subscription.service.js";
import { findSubscription, type StoredSubscription } from "./subscription.store.js";

interface TeamPurchase {
  team: Team;
  purchase: StoredLicence | StoredSubscription;
  seats: number;
}

/** The team purchase a seat command names: a team licence (`lic_…`) or a team subscription (the processor's id). */
async function findTeam(services: Services, input: { team: string; workspace?: string; env?: string }): Promise<TeamPurchase> {
  if (input.team.startsWith("lic_")) {
    const licence = await findLicenceById(services.db, input.team);
    if (!licence) throw notFound(`No licence "${input.team}".`);
    if (licence.seats === null || licence.seats <= 0)
      throw invalidParameter("team", `Licence ${licence.id} is not a team licence (it has no seats).`, { reason: "not_team" });
    return { team: { teamLicenceId: licence.id }, purchase: licence, seats: licence.seats };
  }
  const sub = await requireSubscription(services, { id: input.team, workspace: input.workspace, env: input.env });
  if (sub.seats === null || sub.seats <= 0)
    throw invalidParameter("team", `Subscription ${sub.id} is not a team subscription (it has no seats).`, { reason: "not_team" });
  return { team: { teamSubscriptionId: sub.id }, purchase: sub, seats: sub.seats };
}

/** The team purchase as stored now, under the payment lock; refused when it no longer stands. */
async function standingTeam(tx: BillingTx, found: TeamPurchase): Promise<TeamPurchase> {
  if ("teamLicenceId" in found.team) {
    const licence = await findLicenceById(tx.trx, found.team.teamLicenceId);
    if (licence?.status !== "active") {
      throw invalidParameter("team", `Team licence ${found.team.teamLicenceId} is ${licence?.status ?? "gone"}; its seats give no access.`, {
        reason: "team_not_running",
      });
    }
    return { ...found, purchase: licence };
  }
  const sub = await findSubscription(tx.trx, tx, found.team.teamSubscriptionId);
  if (!sub || !subscriptionRuns(sub))
    throw invalidParameter("team", `Team subscription ${found.team.teamSubscriptionId} is not running; its seats give no access.`, {
      reason: "team_not_running",
    });
  // Its seats as now billed: Stripe's quantity may have changed them since they were read.
  return { ...found, purchase: sub, seats: sub.seats ?? found.seats };
}

export interface SeatResult {
  seat: string;
  team: string;
  email: string;
  status: "active" | "revoked";
  seats_in_use: number;
  seats: number;
}

const teamId = (team: Team) => ("teamLicenceId" in team ? team.teamLicenceId : team.teamSubscriptionId);

/** Hands a seat to an address. Handing one to an address that holds one of this team already answers that seat. */
export async function assignSeat(services: Services, input: { team: string; email: string; workspace?: string; env?: string }): Promise<SeatResult> {
  if (!isEmailShape(input.email)) throw invalidParameter("email", "email must be an email address such as person@example.com.", { reason: "email_shape" });
  const found = await findTeam(services, input);
  return inBillingTransaction(services, found.purchase, async (tx) => {
    const { team, purchase, seats } = await standingTeam(tx, found);
    const person = await ensurePerson(tx.trx, tx.workspaceId, tx.env, input.email, tx.now);
    const taken = await listSeats(tx.trx, tx, team);
    const held = taken.find((s) => s.personId === person.id);
    if (held) return { seat: held.id, team: teamId(team), email: person.email, status: "active", seats_in_use: taken.length, seats };
    if (taken.length >= seats) {
      throw invalidParameter("team", `${teamId(team)} has ${seats} seat${seats === 1 ? "" : "s"}, all in use; unassign one first.`, {
        reason: "seats_full",
        facts: { seats },
      });
    }
    // A seat is a pass (decisions.md): the Hobby plan's limit applies as to a grant.
    const workspace = await findWorkspaceById(tx.trx, tx.workspaceId);
    if (workspace?.plan === "hobby") {
      const cap = services.limits.hobbyPasses;
      if ((await countPassesBeforeAdding(tx.trx, tx.workspaceId, tx.env, tx.now, cap)) >= cap) {
        throw new ApiError("plan_limit", `The Hobby plan holds at most ${cap} passes at once; revoke one or upgrade the workspace.`, {
          limit: "hobby-passes",
          reason: "passes_full",
        });
      }
    }
    const seat: StoredLicence = {
      id: newId("lic"),
      workspaceId: tx.workspaceId,
      env: tx.env,
      personId: person.id,
      productKind: purchase.productKind,
      productId: purchase.productId,
      planId: purchase.planId,
      status: "active",
      purchasedAt: tx.now,
      amountCents: null,
      currency: null,
      paymentIntent: null,
      checkoutSession: null,
      seats: null,
      teamLicenceId: "teamLicenceId" in team ? team.teamLicenceId : null,
      teamSubscriptionId: "teamSubscriptionId" in team ? team.teamSubscriptionId : null,
      createdAt: tx.now,
      refundedAt: null,
    };
    await insertLicence(tx.trx, seat);
    await syncHolders(tx, purchase, [person.id]);
    return { seat: seat.id, team: teamId(team), email: person.email, status: "active", seats_in_use: taken.length + 1, seats };
  });
}

/** Takes a seat back: its licence is revoked and the seat is free for another address. */
export async function unassignSeat(services: Services, input: { team: string; email: string; workspace?: string; env?: string }): Promise<SeatResult> {
  const found = await findTeam(services, input);
  return inBillingTransaction(services, found.purchase, async (tx) => {
    const { team, purchase, seats } = found;
    const person = await findPersonByEmail(tx.trx, tx.workspaceId, tx.env, input.email);
    const taken = await listSeats(tx.trx, tx, team);
    const held = person ? taken.find((s) => s.personId === person.id) : undefined;
    if (!person || !held) throw notFound(`${input.email} holds no seat of ${teamId(team)}.`);
    await setLicenceStatus(tx.trx, held.id, "revoked");
    await syncHolders(tx, purchase, [person.id]);
    return { seat: held.id, team: teamId(team), email: person.email, status: "revoked", seats_in_use: taken.length - 1, seats };
  });
}
