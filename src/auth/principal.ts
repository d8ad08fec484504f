// Who an API request acts as, once its key is checked: the type the request context
// (services.ts) and every use case behind an API route take, apart from the key checking
// itself (key.service.ts) so that the context needs nothing else of auth.
import type { Env } from "../db/schema.js";
import type { ServicePlan } from "../workspaces/workspace.types.js";

/** What an authenticated request acts as: one workspace in one environment. */
export interface Principal {
  keyId: string;
  workspaceId: string;
  workspaceSlug: string;
  plan: ServicePlan;
  env: Env;
  ownerIds: string[];
  /**
   * Whether this request has been counted against the key's requests per minute. A route
   * that counts lookups counts the key's request in the same statement (one round trip
   * less); until it does, this is false.
   */
  keyRequestCounted: boolean;
}
