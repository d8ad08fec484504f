// What a person bought, as the client shows it to them: licences (with their keys),
// subscriptions (which the buyer sets to end at the period's end, or takes that back),
// and the seats of a team purchase, which only its buyer hands out. The person is a
// device session's (the client API) or a web session's (the hosted Manage page).
import { countSeats, findLicenceById, listLicencesOfPerson, listSeats, type Team } from "../billing/licence.store.js";
import { assignSeat, type SeatResult, unassignSeat } from "../billing/seat.service.js";
import { setOwnCancelAtPeriodEnd } from "../billing/subscription.service.js";
import { findSubscription, listSubscriptionsOfPerson, type StoredSubscription } from "../billing/subscription.store.js";
import { toIso } from "../clock.js";
import { findPeopleByIds } from "../customers/person.store.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import { processorOf } from "../payments/processors.js";
import type { Services } from "../services.js";
import { licenceKeysOf } from "./activation.service.js";
import type { Purchase } from "./client.schema.js";
import { requireSignedIn } from "./client.service.js";
import type { PersonScope } from "./device-session.store.js";

const teamOf = (licence: { teamLicenceId: string | null; teamSubscriptionId: string | null }) => licence.teamLicenceId ?? licence.teamSubscriptionId;
const isTeam = (seats: number | null): seats is number => seats !== null && seats > 0;

/** The person's licences and subscriptions in this workspace environment, newest first; a key-activated device sees its licence only. */
export async function listPurchases(services: Services, person: PersonScope): Promise<{ data: Purchase[] }> {
  const { db } = services;
  const scope = { workspaceId: person.workspaceId, env: person.env };
  const licences = (await listLicencesOfPerson(db, scope, person.personId)).filter((l) => person.licenceId === null || l.id === person.licenceId);
  const subscriptions = person.licenceId === null ? await listSubscriptionsOfPerson(db, scope, person.personId) : [];
  const keys = await licenceKeysOf(services, licences);

  const purchases: (Purchase & { at: number })[] = [];
  for (const l of licences) {
    purchases.push({
      at: l.purchasedAt,
      id: l.id,
      kind: "licence",
      product: l.productId,
      product_kind: l.productKind,
      plan: l.planId,
      status: l.status,
      purchased_at: toIso(l.purchasedAt),
      period_end: null,
      seats: isTeam(l.seats) ? l.seats : null,
      seats_in_use: isTeam(l.seats) ? await countSeats(db, scope, { teamLicenceId: l.id }) : null,
      team: teamOf(l),
      key: keys.get(l.id) ?? null,
      cancel_at_period_end: null,
      ends_at: null,
    });
  }
  for (const s of subscriptions) purchases.push({ at: s.createdAt, ...(await subscriptionPurchase(services, s)) });
  // Newest first; the id orders purchases of the same moment, so that the list does not change from one call to the next.
  purchases.sort((a, b) => b.at - a.at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { data: purchases.map(({ at: _at, ...p }) => p) };
}

/** A subscription as the person's list of purchases shows it. */
async function subscriptionPurchase(services: Services, s: StoredSubscription): Promise<Purchase> {
  return {
    id: s.id,
    kind: "subscription",
    product: s.productId,
    product_kind: s.productKind,
    plan: s.planId,
    status: s.status,
    purchased_at: toIso(s.createdAt),
    period_end: toIso(s.currentPeriodEnd),
    seats: isTeam(s.seats) ? s.seats : null,
    seats_in_use: isTeam(s.seats) ? await countSeats(services.db, s, { teamSubscriptionId: s.id }) : null,
    team: null,
    key: null,
    cancel_at_period_end: s.cancelAtPeriodEnd,
    ends_at: s.endedAt !== null ? toIso(s.endedAt) : s.cancelAt !== null ? toIso(s.cancelAt) : s.cancelAtPeriodEnd ? toIso(s.currentPeriodEnd) : null,
  };
}

/** The subscription the person bought, in their workspace environment: 404 for anyone else's, whatever exists elsewhere. */
async function requireOwnSubscription(services: Services, person: PersonScope, id: string, action: string): Promise<StoredSubscription> {
  requireSignedIn(person, action);
  const sub = await findSubscription(services.db, person, id);
  if (!sub || sub.personId !== person.personId) throw notFound(`No subscription "${id}" of yours.`);
  return sub;
}

/**
 * Sets the person's subscription to end at its period's end (`cancel: true`) or takes that
 * back, at the environment's processor (Stripe or Paddle); refused when it does not bill it
 * (billing/subscription.service.ts).
 */
export async function changeOwnSubscription(services: Services, person: PersonScope, id: string, cancel: boolean): Promise<Purchase> {
  const sub = await requireOwnSubscription(services, person, id, cancel ? "cancel a subscription" : "resume a subscription");
  return subscriptionPurchase(services, await setOwnCancelAtPeriodEnd(services, sub, cancel));
}

/** The address of the processor's billing portal for the person's subscription (Stripe's, or Paddle's customer portal), coming back to `returnUrl` where the processor takes one. */
export async function openBillingPortal(services: Services, person: PersonScope, id: string, returnUrl: string): Promise<{ url: string }> {
  const sub = await requireOwnSubscription(services, person, id, "manage billing");
  const url = await (await processorOf(services, sub)).customerPortal(services, sub, sub.id, returnUrl);
  if (url === null)
    throw invalidParameter("id", `Subscription ${sub.id} is billed by the vendor outside Warden: ask them about payments and invoices.`, {
      reason: "billed_outside",
    });
  return { url };
}

/** The team purchase the person bought: 404 for anyone else's (or none), whatever exists elsewhere. */
async function requireOwnTeam(services: Services, person: PersonScope, purchaseId: string): Promise<{ team: Team; seats: number }> {
  requireSignedIn(person, "hand out seats");
  const scope = { workspaceId: person.workspaceId, env: person.env };
  const purchase = purchaseId.startsWith("lic_") ? await findLicenceById(services.db, purchaseId) : await findSubscription(services.db, scope, purchaseId);
  if (!purchase || purchase.workspaceId !== scope.workspaceId || purchase.env !== scope.env || purchase.personId !== person.personId) {
    throw notFound(`No purchase "${purchaseId}" of yours.`);
  }
  if (!isTeam(purchase.seats)) throw invalidParameter("id", `${purchaseId} is not a team purchase; it has no seats to hand out.`, { reason: "not_team" });
  return { team: purchaseId.startsWith("lic_") ? { teamLicenceId: purchaseId } : { teamSubscriptionId: purchaseId }, seats: purchase.seats };
}

export async function listTeamSeats(services: Services, person: PersonScope, purchaseId: string) {
  const { team, seats } = await requireOwnTeam(services, person, purchaseId);
  const taken = await listSeats(services.db, person, team);
  const people = await findPeopleByIds(
    services.db,
    taken.map((s) => s.personId),
  );
  return {
    purchase: purchaseId,
    seats,
    seats_in_use: taken.length,
    data: taken.map((s) => ({ id: s.id, email: people.get(s.personId)?.email ?? "", assigned_at: toIso(s.createdAt) })),
  };
}

const seatChange = (result: SeatResult) => ({
  seat: result.seat,
  purchase: result.team,
  email: result.email,
  status: result.status,
  seats: result.seats,
  seats_in_use: result.seats_in_use,
});

/** Hands a seat to an address (the same address again answers its seat); never more than bought. */
export async function assignTeamSeat(services: Services, person: PersonScope, purchaseId: string, email: string) {
  await requireOwnTeam(services, person, purchaseId);
  return seatChange(await assignSeat(services, { team: purchaseId, email, workspace: person.workspaceSlug, env: person.env }));
}

/** Takes a seat back by its id: the holder loses access at their next check, and the seat is free again. */
export async function unassignTeamSeat(services: Services, person: PersonScope, purchaseId: string, seatId: string) {
  const { team } = await requireOwnTeam(services, person, purchaseId);
  const seat = (await listSeats(services.db, person, team)).find((s) => s.id === seatId);
  const holder = seat ? (await findPeopleByIds(services.db, [seat.personId])).get(seat.personId) : undefined;
  if (!holder) throw notFound(`No seat "${seatId}" handed out from ${purchaseId}.`);
  return seatChange(await unassignSeat(services, { team: purchaseId, email: holder.email, workspace: person.workspaceSlug, env: person.env }));
}
