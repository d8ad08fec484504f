// What is stored already about one batch of an import's lines (the people they name, the
// licences, subscriptions, grants, devices and sign-ins of those people), read in a few
// statements so that the check compares each line with it without a query per line.
import { findLicencesByIds, type Licence, listLicencesOfPeople } from "../billing/licence.store.js";
import { findSubscriptions, type Subscription } from "../billing/subscription.store.js";
import { findSignedInTools } from "../customers/customer.store.js";
import { type Device, listDevicesOfPeople } from "../customers/device.store.js";
import { normaliseEmail } from "../customers/email.js";
import { findPeopleByEmails, type Person } from "../customers/person.store.js";
import type { Executor } from "../db/database.js";
import type { Env } from "../db/schema.js";
import { listGrantsOfPeople, type StoredGrant } from "../grants/grant.store.js";
import type { ImportLine } from "./import-line.js";

/** What is stored about the people and ids of one batch of lines, read in a few statements. */
export interface StoredState {
  people: Map<string, Person>;
  licencesById: Map<string, Licence>;
  subscriptions: Map<string, Subscription>;
  licencesOf: Map<string, Licence[]>;
  grantsOf: Map<string, StoredGrant[]>;
  devicesOf: Map<string, Device[]>;
  signedInTools: Map<string, Map<string, number>>;
}

export async function loadStoredState(ex: Executor, scope: { workspaceId: string; env: Env }, lines: readonly ImportLine[]): Promise<StoredState> {
  const emails = new Set<string>();
  const licenceIds = new Set<string>();
  const subscriptionIds: string[] = [];
  const types = new Set<ImportLine["type"]>();
  for (const line of lines) {
    emails.add(normaliseEmail(line.email));
    types.add(line.type);
    if (line.type === "licence" && line.id !== undefined) licenceIds.add(line.id);
    if (line.type === "device" && line.licence) licenceIds.add(line.licence);
    if (line.type === "subscription") subscriptionIds.push(line.id);
  }
  const people = await findPeopleByEmails(ex, scope.workspaceId, scope.env, [...emails]);
  const personIds = [...people.values()].map((p) => p.id);
  const known = personIds.length > 0;
  return {
    people,
    licencesById: await findLicencesByIds(ex, [...licenceIds]),
    subscriptions: await findSubscriptions(ex, scope, subscriptionIds),
    licencesOf: known && types.has("licence") ? await listLicencesOfPeople(ex, scope, personIds) : new Map(),
    grantsOf: known && (types.has("grant") || types.has("trial")) ? await listGrantsOfPeople(ex, personIds) : new Map(),
    devicesOf: known && types.has("device") ? await listDevicesOfPeople(ex, personIds) : new Map(),
    signedInTools: known && types.has("account") ? await findSignedInTools(ex, scope, personIds) : new Map(),
  };
}
