// Licence keys: a buyer sees the key of each licence (GET /purchases), and a device
// activated with it needs no sign-in. The key is stored as its SHA-256 for the lookup
// and sealed under WARDEN_SECRET_KEY so that the buyer can be shown it again.

import { sameHash, sha256 } from "../auth/mailed-code.js";
import { inBillingTransaction } from "../billing/billing.context.js";
import { findLicenceById, type StoredLicence } from "../billing/licence.store.js";
import { syncCustomer, toolScope, toolsOfProduct } from "../customers/customer.service.js";
import { findPersonById } from "../customers/person.store.js";
import { ApiError, invalidParameter, notFound } from "../errors/errors.js";
import { randomBase62 } from "../ids.js";
import type { Services } from "../services.js";
import type { ActivateBody } from "./client.schema.js";
import { checkAccess, openDeviceSession, resolveWorkspaceTool } from "./client.service.js";
import type { DeviceSession } from "./device-session.store.js";
import { countActivatedDevices, findLicenceIdByKeyHash, findSealedLicenceKeys, setLicenceKey } from "./licence-key.store.js";

// `wlk_` + 32 base62 characters: about 190 random bits, so SHA-256 is enough to store it.
const KEY_SHAPE = /^wlk_[0-9A-Za-z]{32}$/;

/** Whether a licence can have a key: a team purchase activates nothing itself. */
export const hasKey = (licence: StoredLicence) => licence.seats === null || licence.seats <= 0;

/** The keys of these licences, made on first ask (a race between two asks keeps the first key). */
export async function licenceKeysOf(services: Services, licences: readonly StoredLicence[]): Promise<Map<string, string>> {
  const { db, secretBox } = services;
  const keyed = licences.filter(hasKey).map((l) => l.id);
  const sealed = await findSealedLicenceKeys(db, keyed);
  const missing = keyed.filter((id) => !sealed.has(id));
  if (missing.length > 0) {
    await db.transaction().execute(async (trx) => {
      for (const id of missing) {
        const key = `wlk_${randomBase62(32)}`;
        await setLicenceKey(trx, id, sha256(key), secretBox.seal(key));
      }
    });
    for (const [id, value] of await findSealedLicenceKeys(db, missing)) sealed.set(id, value);
  }
  return new Map([...sealed].map(([id, value]) => [id, secretBox.open(value)]));
}

/**
 * Activates a licence on a new device: a device session like a sign-in's, for the
 * licence's holder, counted among their devices. At most `devicesPerLicence` devices
 * at once; signing one out frees its place.
 */
export async function activateLicence(services: Services, input: { hostname: string; source: string; toolId: string; body: ActivateBody }) {
  const { db, clock, limits } = services;
  const { workspace, tool } = await resolveWorkspaceTool(services, input.hostname, input.body.workspace, input.toolId);
  await limits.assertSourceNotBlocked(db, input.source, clock.now());
  const hash = sha256(input.body.key);
  const found = KEY_SHAPE.test(input.body.key) ? await findLicenceIdByKeyHash(db, hash) : null;
  const licence = found && sameHash(found.keyHash, hash) ? await findLicenceById(db, found.id) : null;
  if (!licence || licence.workspaceId !== workspace.id) {
    // Guessing keys costs like guessing API keys: 30 wrong ones a minute from one address, then 429.
    const limited = await limits.countWrongKey(db, input.source, clock.now());
    throw limited ?? invalidParameter("key", "This licence key is not known to this workspace.");
  }
  if (!(await toolsOfProduct(db, workspace.id, licence.productKind, licence.productId)).includes(tool.id)) {
    throw invalidParameter("key", `This licence is for ${licence.productKind} "${licence.productId}", which does not include tool "${tool.id}".`);
  }

  const activated = await inBillingTransaction(services, licence, async (tx) => {
    // Read again under the payment lock: a refund or dispute may have landed meanwhile.
    const current = await findLicenceById(tx.trx, licence.id);
    if (!current) throw notFound("No such licence.");
    if (current.status !== "active") {
      const why = current.status === "suspended" ? "suspended while a dispute of its payment is open" : "revoked";
      throw invalidParameter("key", `This licence is ${why}; it activates no device.`);
    }
    const cap = limits.devicesPerLicence;
    if ((await countActivatedDevices(tx.trx, current.id)) >= cap) {
      throw new ApiError("plan_limit", `This licence is active on ${cap} devices already; sign one of them out first.`, { limit: "devices-per-licence" });
    }
    const person = await findPersonById(tx.trx, tx.workspaceId, tx.env, current.personId);
    if (!person) throw notFound("No such licence holder.");
    const opened = await openDeviceSession(tx.trx, {
      workspaceId: tx.workspaceId,
      env: tx.env,
      toolId: tool.id,
      personId: person.id,
      licenceId: current.id,
      device: input.body.device,
      now: tx.now,
    });
    await syncCustomer(tx.trx, toolScope(tx.workspaceId, tx.env, tool.id), person.id, tx.now);
    const session: DeviceSession = {
      deviceId: opened.device.id,
      workspaceId: tx.workspaceId,
      workspaceSlug: workspace.slug,
      env: tx.env,
      toolId: tool.id,
      personId: person.id,
      email: person.email,
      licenceId: current.id,
      tokenHash: sha256(opened.token),
    };
    return { ...opened, email: person.email, session };
  });
  // The device's first check comes with it, after the commit, signed like any other.
  const { session, ...answer } = activated;
  return { ...answer, access: await checkAccess(services, session, tool.id) };
}
