// What a person bought, as the client shows it to them: licences (with their keys),
// subscriptions, and the seats of a team purchase, which only its buyer hands out.
import { countSeats, findLicenceById, listLicencesOfPerson, listSeats, type Team } from "../billing/licence.store.js";
import { assignSeat, type SeatResult, unassignSeat } from "../billing/seat.service.js";
import { findSubscription, listSubscriptionsOfPerson } from "../billing/subscription.store.js";
import { toIso } from "../clock.js";
import { findPeopleByIds } from "../customers/person.store.js";
import { invalidParameter, notFound } from "../errors/errors.js";
import type { Services } from "../services.js";
import { licenceKeysOf } from "./activation.service.js";
import type { Purchase } from "./client.schema.js";
import { requireSignedIn } from "./client.service.js";
import type { DeviceSession } from "./device-session.store.js";

const teamOf = (licence: { teamLicenceId: string | null; teamSubscriptionId: string | null }) => licence.teamLicenceId ?? licence.teamSubscriptionId;
const isTeam = (seats: number | null): seats is number => seats !== null && seats > 0;

/** The person's licences and subscriptions in this workspace environment, newest first; a key-activated device sees its licence only. */
export async function listPurchases(services: Services, session: DeviceSession): Promise<{ data: Purchase[] }> {
  const { db } = services;
  const scope = { workspaceId: session.workspaceId, env: session.env };
  const licences = (await listLicencesOfPerson(db, scope, session.personId)).filter((l) => session.licenceId === null || l.id === session.licenceId);
  const subscriptions = session.licenceId === null ? await listSubscriptionsOfPerson(db, scope, session.personId) : [];
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
    });
  }
  for (const s of subscriptions) {
    purchases.push({
      at: s.createdAt,
      id: s.id,
      kind: "subscription",
      product: s.productId,
      product_kind: s.productKind,
      plan: s.planId,
      status: s.status,
      purchased_at: toIso(s.createdAt),
      period_end: toIso(s.currentPeriodEnd),
      seats: isTeam(s.seats) ? s.seats : null,
      seats_in_use: isTeam(s.seats) ? await countSeats(db, scope, { teamSubscriptionId: s.id }) : null,
      team: null,
      key: null,
    });
  }
  purchases.sort((a, b) => b.at - a.at);
  return { data: purchases.map(({ at: _at, ...p }) => p) };
}

/** The team purchase the person bought: 404 for anyone else's (or none), whatever exists elsewhere. */
async function requireOwnTeam(services: Services, session: DeviceSession, purchaseId: string): Promise<{ team: Team; seats: number }> {
  requireSignedIn(session, "hand out seats");
  const scope = { workspaceId: session.workspaceId, env: session.env };
  const purchase = purchaseId.startsWith("lic_") ? await findLicenceById(services.db, purchaseId) : await findSubscription(services.db, scope, purchaseId);
  if (!purchase || purchase.workspaceId !== scope.workspaceId || purchase.env !== scope.env || purchase.personId !== session.personId) {
    throw notFound(`No purchase "${purchaseId}" of yours.`);
  }
  if (!isTeam(purchase.seats)) throw invalidParameter("id", `${purchaseId} is not a team purchase; it has no seats to hand out.`);
  return { team: purchaseId.startsWith("lic_") ? { teamLicenceId: purchaseId } : { teamSubscriptionId: purchaseId }, seats: purchase.seats };
}

export async function listTeamSeats(services: Services, session: DeviceSession, purchaseId: string) {
  const { team, seats } = await requireOwnTeam(services, session, purchaseId);
  const taken = await listSeats(services.db, session, team);
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
export async function assignTeamSeat(services: Services, session: DeviceSession, purchaseId: string, email: string) {
  await requireOwnTeam(services, session, purchaseId);
  return seatChange(await assignSeat(services, { team: purchaseId, email, workspace: session.workspaceSlug, env: session.env }));
}

/** Takes a seat back by its id: the holder loses access at their next check, and the seat is free again. */
export async function unassignTeamSeat(services: Services, session: DeviceSession, purchaseId: string, seatId: string) {
  const { team } = await requireOwnTeam(services, session, purchaseId);
  const seat = (await listSeats(services.db, session, team)).find((s) => s.id === seatId);
  const holder = seat ? (await findPeopleByIds(services.db, [seat.personId])).get(seat.personId) : undefined;
  if (!holder) throw notFound(`No seat "${seatId}" handed out from ${purchaseId}.`);
  return seatChange(await unassignSeat(services, { team: purchaseId, email: holder.email, workspace: session.workspaceSlug, env: session.env }));
}
