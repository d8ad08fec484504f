// Glossary of the stored model (types of the rows; they never leave store modules):
// - owner: a person who owns workspaces; suspending one silences every key they own.
// - workspace: a vendor's tenant, with its slug (its address) and service plan.
// - tool / bundle / plan: what a workspace sells; they exist in both environments.
// - env: "test" or "live"; everything about customers is kept per environment.
// - person: an address known to a workspace environment (normalised for matching).
// - licence, subscription, grant (kind grant or trial), device: the sources of access.
// - customer: one row per (tool, person) that has ever held the tool or signed in to it;
//   it keeps `since` and the current kind so that listing is an index walk.
// - counter: a windowed count for a limit.
// - event: a fact reported to the vendor, stored whether or not anyone listens.
// - webhook endpoint: a vendor URL with its signing secret (sealed) and event choice.
// - delivery: one event owed to one endpoint, with its attempts (the delivery log).
// - stripe account: a workspace environment's Stripe webhook secret and key (sealed).
// - stripe event: a Stripe event already handled (or held back), by Stripe's event id.
// - dispute: a buyer's dispute of a payment, open or closed.
// - signing key: an Ed25519 key that signs access tokens (sealed), by generation.
// Times are epoch milliseconds (bigint); booleans are 0/1 integers, the same on
// SQLite and PostgreSQL.

import type { Generated } from "kysely";

export type Env = "test" | "live";
export type ProductKind = "tool" | "bundle";
export type CustomerKind = "holder" | "member" | "none";

export interface OwnersTable {
  id: string;
  email: string;
  email_norm: string;
  suspended_at: number | null;
  created_at: number;
}

export interface WorkspacesTable {
  id: string;
  slug: string;
  name: string;
  plan: "hobby" | "pro";
  created_at: number;
}

export interface WorkspaceOwnersTable {
  workspace_id: string;
  owner_id: string;
  /** When they joined it by invitation (migration 018); null for the owners it was created with. */
  added_at: number | null;
}

/** An address invited to co-own a workspace (migration 018): accepted by signing in before it expires. */
export interface OwnerInvitationsTable {
  id: string;
  workspace_id: string;
  email: string;
  email_norm: string;
  invited_by: string | null;
  created_at: number;
  expires_at: number;
  accepted_at: number | null;
  withdrawn_at: number | null;
}

export interface ToolsTable {
  workspace_id: string;
  id: string;
  name: string;
  created_at: number;
  /** Days of the trial a person may start once from the client (migration 006); 0 offers none. */
  trial_days: Generated<number>;
}

export interface BundlesTable {
  workspace_id: string;
  id: string;
  name: string;
  created_at: number;
}

export interface BundleToolsTable {
  workspace_id: string;
  bundle_id: string;
  tool_id: string;
}

export interface PlansTable {
  workspace_id: string;
  product_kind: ProductKind;
  product_id: string;
  id: string;
  name: string;
  billing: "one_time" | "subscription";
  amount_cents: number | null;
  currency: string;
  interval: "month" | "year" | null;
  is_default: number;
  created_at: number;
  /** When it stopped being offered at checkout (migration 017); null while offered. */
  retired_at: number | null;
  /** 0: a credit pack only, whose purchase gives no access to the tool (migration 042). */
  gives_access: Generated<number>;
}

/** A feature a tool declares, unlocked by plans' terms (migration 042). */
export interface ToolFeaturesTable {
  workspace_id: string;
  tool_id: string;
  id: string;
  name: string;
  created_at: number;
}

/** A meter a tool declares: what a person spends, counted per period (migration 042). */
export interface ToolMetersTable {
  workspace_id: string;
  tool_id: string;
  id: string;
  name: string;
  unit: string;
  /** Each calendar month (UTC) for a person who holds nothing; null offers none. */
  free_allowance: number | null;
  created_at: number;
}

/** A plan's terms for one tool it covers, as JSON (migration 042). */
export interface PlanTermsTable {
  workspace_id: string;
  product_kind: ProductKind;
  product_id: string;
  plan_id: string;
  tool_id: string;
  /** JSON array of feature ids. */
  features: Generated<string>;
  /** JSON object: meter id → allowance per period. */
  allowances: Generated<string>;
  /** JSON object: meter id → credits a purchase adds. */
  credits: Generated<string>;
  credits_expire_days: number | null;
}

/** What a person used of one source's allowance in one period (migration 042). */
export interface MeterUsageTable {
  workspace_id: string;
  env: Env;
  person_id: string;
  tool_id: string;
  meter_id: string;
  /** The source's id (`sub_…`, `lic_…`, `gr_…`) or `free`. */
  bucket: string;
  period_start: number;
  period_end: number;
  used: number;
}

/** Credits added to a person's meter: a pack bought, or a hand adjustment (migration 042). */
export interface MeterCreditsTable {
  id: string;
  workspace_id: string;
  env: Env;
  person_id: string;
  tool_id: string;
  meter_id: string;
  licence_id: string | null;
  amount: number;
  remaining: number;
  expires_at: number | null;
  note: string | null;
  created_at: number;
}

/** The row every spend of one person's meter locks first (migration 043). */
export interface MeterLocksTable {
  workspace_id: string;
  env: Env;
  person_id: string;
  tool_id: string;
  meter_id: string;
  spends: number;
}

/** Units of a meter spent per UTC day 'YYYY-MM-DD' (migration 044). */
export interface InsightMeterDaysTable {
  workspace_id: string;
  env: Env;
  tool_id: string;
  meter_id: string;
  day: string;
  /** One of METER_DAY_SHARDS, by the person (migration 044). */
  shard: number;
  used: number;
}

/** A person's allowance of a meter that ran out, once per period (migration 044). */
export interface AllowanceRunoutsTable {
  workspace_id: string;
  env: Env;
  tool_id: string;
  meter_id: string;
  person_id: string;
  period: string;
  ran_out_at: number;
  resets_at: number;
}

export interface ApiKeysTable {
  id: string;
  workspace_id: string;
  env: Env;
  name: string | null;
  hash: string;
  created_at: number;
  revoked_at: number | null;
  /** The key's last four characters, shown in lists (migration 013; null for older keys). */
  last_four: string | null;
}

export interface SettingsTable {
  name: string;
  value: string;
}

export interface SigningKeysTable {
  /** The key's JWK thumbprint (RFC 7638). */
  kid: string;
  /** 1 for the first key, one more for each rotation; unique, so that one key wins a race. */
  generation: number;
  /** The public key's JWK `x` (base64url). */
  public_x: string;
  /** The private key's JWK `d`, sealed under WARDEN_SECRET_KEY. */
  private_sealed: string;
  created_at: number;
}

export interface CountersTable {
  scope: string;
  window_end: number;
  count: number;
  /** Processes that leased a block of it in this window, a bit each (limits/quota-leases.ts). */
  takers: Generated<number>;
  /** The size of the last block leased. */
  last_take: Generated<number>;
}

/** One row (id 1): raised by trigger on every write to api_keys, workspaces, workspace_owners and owners. */
export interface AuthVersionTable {
  id: number;
  version: number;
}

export interface PeopleTable {
  id: string;
  workspace_id: string;
  env: Env;
  email: string;
  email_norm: string;
  signed_in_at: number | null;
  created_at: number;
  /** Which kinds of source the person has ever had, a bit each (migration 011); set by trigger. */
  source_kinds: Generated<number>;
}

export interface LicencesTable {
  id: string;
  workspace_id: string;
  env: Env;
  person_id: string;
  product_kind: ProductKind;
  product_id: string;
  plan_id: string | null;
  status: "active" | "suspended" | "revoked";
  purchased_at: number;
  amount_cents: number | null;
  currency: string | null;
  payment_intent: string | null;
  checkout_session: string | null;
  seats: number | null;
  team_licence_id: string | null;
  team_subscription_id: string | null;
  created_at: number;
  /** When refunded in full (migration 004); a refund revokes the licence. */
  refunded_at: number | null;
  /** What has been refunded of its amount, partial refunds together (migration 037); the amount once refunded in full. */
  refunded_cents: Generated<number>;
  /** When the last refund of it, partial or full, was recorded; null while none, or recorded before migration 046. */
  last_refund_at: number | null;
  /** SHA-256 of the licence key and the key sealed (migration 006); null until the buyer first asks for it. */
  key_hash: string | null;
  key_sealed: string | null;
  /** What the vendor earns of its payment after the processor's fee and tax, and those two, where the processor says so (Paddle; migration 053): null otherwise. */
  earnings_cents: number | null;
  fee_cents: number | null;
  tax_cents: number | null;
}

export interface SubscriptionsTable {
  workspace_id: string;
  env: Env;
  id: string;
  person_id: string;
  product_kind: ProductKind;
  product_id: string;
  plan_id: string | null;
  status: string;
  current_period_start: number;
  current_period_end: number;
  cancel_at_period_end: number;
  cancel_at: number | null;
  ended_at: number | null;
  seats: number | null;
  created_at: number;
  /** Stripe's time of the state last applied (migration 004): older events never overwrite it. */
  processor_at: number | null;
  /** UTC day (YYYY-MM-DD) of the last subscription.cancelled with immediately false. */
  cancel_notified_day: string | null;
  /** The buyer's person id when bought signed in: the events' user_id. */
  account_person_id: string | null;
}

export interface GrantsTable {
  id: string;
  workspace_id: string;
  env: Env;
  tool_id: string;
  person_id: string;
  kind: "grant" | "trial";
  starts_at: number;
  ends_at: number | null;
  revoked_at: number | null;
  note: string | null;
  created_at: number;
  /** A trial's first purchase of a product containing its tool: within the trial, or within 30 days after (migration 037). */
  outcome: TrialOutcome | null;
  /** The same, of any product (the page over every tool). */
  outcome_any: TrialOutcome | null;
  /** The tool's plan whose terms a grant gives; null: the tool's top terms (migration 042). */
  plan_id: Generated<string | null>;
}

export type TrialOutcome = "within" | "after";

export interface DevicesTable {
  id: string;
  workspace_id: string;
  env: Env;
  tool_id: string;
  person_id: string;
  licence_id: string | null;
  name: string;
  platform: string | null;
  created_at: number;
  last_active_at: number | null;
  signed_out_at: number | null;
  /** SHA-256 of the device session token (migration 005); null for a device with no session. */
  token_hash: string | null;
}

export interface SignInCodesTable {
  id: string;
  workspace_id: string;
  env: Env;
  tool_id: string;
  email: string;
  email_norm: string;
  code_hash: string;
  /** A confirmation code's action and target, hashed; null for sign-in codes and links. */
  action_hash: string | null;
  attempts: number;
  created_at: number;
  expires_at: number;
  closed_at: number | null;
  /** SHA-256 of the pre-session cookie of the browser a hosted page's code was asked in (migration 023); null for the client API's. */
  browser_hash: string | null;
}

export interface CustomersTable {
  workspace_id: string;
  env: Env;
  tool_id: string;
  person_id: string;
  since: number;
  signed_in: number;
  kind: CustomerKind;
  held_until: number | null;
}

export interface IdempotencyKeysTable {
  workspace_id: string;
  env: Env;
  key: string;
  request_hash: string;
  status: number;
  response_body: string;
  created_at: number;
}

export interface EventsTable {
  workspace_id: string;
  env: Env;
  id: string;
  type: string;
  body: string;
  example: number;
  created_at: number;
  /** Whom the event is about; null for an example, or an event written before migration 046. */
  person_id: string | null;
}

export interface WebhookEndpointsTable {
  id: string;
  workspace_id: string;
  env: Env;
  url: string;
  event_types: string | null;
  secret_sealed: string;
  /** The secret a rotation replaced, still signing beside the current one until its expiry (migration 019). */
  previous_secret_sealed: string | null;
  previous_secret_expires_at: number | null;
  enabled: number;
  disabled_reason: string | null;
  disabled_at: number | null;
  last_success_at: number | null;
  failing_since: number | null;
  created_at: number;
  removed_at: number | null;
  /** The vendor's note of what the endpoint is for (migration 028). */
  description: string | null;
}

/** Which worker sends an endpoint's deliveries now, and until when (migration 012). */
export interface EndpointLeasesTable {
  endpoint_id: string;
  locked_until: number | null;
  locked_by: string | null;
}

export type DeliveryStatus = "pending" | "succeeded" | "failed";

export interface DeliveriesTable {
  id: string;
  workspace_id: string;
  env: Env;
  endpoint_id: string;
  event_id: string;
  status: DeliveryStatus;
  attempts: number;
  one_shot: number;
  next_attempt_at: number | null;
  last_attempt_at: number | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  /** The scheduled retry a manual resend of a pending delivery went ahead of (migration 014). */
  retry_at: number | null;
  /** Creation order, assigned by the database (migration 003). */
  seq: Generated<number>;
}

export interface DeliveryAttemptsTable {
  id: string;
  delivery_id: string;
  attempted_at: number;
  duration_ms: number;
  status_code: number | null;
  response_body: string | null;
  error: string | null;
  manual: number;
  /** Creation order, assigned by the database (migration 003). */
  seq: Generated<number>;
}

// Payments (migration 004).

export interface StripeAccountsTable {
  workspace_id: string;
  env: Env;
  webhook_secret_sealed: string;
  secret_key_sealed: string | null;
  created_at: number;
  updated_at: number;
}

export interface BillingLocksTable {
  workspace_id: string;
  env: Env;
}

export type StripeEventOutcome = "applied" | "ignored" | "deferred";

export interface StripeEventsTable {
  workspace_id: string;
  env: Env;
  id: string;
  type: string;
  stripe_created: number;
  received_at: number;
  outcome: StripeEventOutcome;
  reason: string | null;
  subscription_id: string | null;
  payload: string | null;
}

// Paddle Billing (migration 047).

export interface PaddleAccountsTable {
  workspace_id: string;
  env: Env;
  webhook_secret_sealed: string;
  api_key_sealed: string | null;
  created_at: number;
  updated_at: number;
}

export interface PaddleEventsTable {
  workspace_id: string;
  env: Env;
  id: string;
  type: string;
  occurred_at: number;
  received_at: number;
  outcome: "applied" | "ignored";
  reason: string | null;
}

export interface PaddleRefundsTable {
  workspace_id: string;
  env: Env;
  adjustment_id: string;
  transaction_id: string;
  amount_cents: number;
  created_at: number;
  /** refund, chargeback or chargeback_reverse (migration 053; rows before it are refunds). */
  action: Generated<PaddleAdjustmentAction>;
  /** What the adjustment took back of the vendor's earnings, Paddle's `totals.earnings` (migration 053; null before). */
  earnings_cents: number | null;
  /** Paddle's time of the adjustment (migration 053; null before). */
  adjusted_at: number | null;
}

export type PaddleAdjustmentAction = "refund" | "chargeback" | "chargeback_reverse";

/** A Paddle price (pri_…) or product (pro_…) id linked to a plan, per environment (migration 050). */
export interface PaddlePlanLinksTable {
  workspace_id: string;
  env: Env;
  paddle_id: string;
  product_kind: ProductKind;
  product_id: string;
  plan_id: string;
  created_at: number;
}

/** A Paddle transaction Warden created for a checkout, and the person it was made for (migration 056). */
export interface PaddleCheckoutsTable {
  workspace_id: string;
  env: Env;
  transaction_id: string;
  person_id: string | null;
  created_at: number;
}

/** A Stripe Price or Product id that names a plan, for purchases without Warden's metadata (migration 029). */
export interface StripePlanLinksTable {
  workspace_id: string;
  stripe_id: string;
  product_kind: ProductKind;
  product_id: string;
  plan_id: string;
  created_at: number;
}

export type ReconcileStatus = "running" | "done" | "failed";
export type ReconcileTrigger = "cli" | "dashboard" | "schedule";

/** One reconcile with Stripe: its progress while it runs, what it found once done (migration 029). */
export interface StripeReconcileRunsTable {
  id: string;
  workspace_id: string;
  env: Env;
  trigger: ReconcileTrigger;
  dry_run: number;
  since: number | null;
  status: ReconcileStatus;
  scanned: number;
  applied: number;
  unmapped: number;
  report: string | null;
  error: string | null;
  started_at: number;
  finished_at: number | null;
}

/** Which run holds a workspace environment's reconcile, until when (migration 029). */
export interface StripeReconcileLeasesTable {
  workspace_id: string;
  env: Env;
  run_id: string;
  expires_at: number;
}

export interface SubscriptionBuyersTable {
  workspace_id: string;
  env: Env;
  subscription_id: string;
  email: string | null;
  account_person_id: string | null;
  checkout_session: string;
  created_at: number;
}

export interface SubscriptionPaymentsTable {
  workspace_id: string;
  env: Env;
  payment_intent: string;
  subscription_id: string;
  created_at: number;
  /** The currency of its refunds (migration 031: before 040, also of the invoice's amount, then kept on this row). */
  currency: string | null;
  /** What the payment's charge has had refunded, all partial refunds together (migration 035). */
  refunded_cents: Generated<number>;
  /** When Stripe made the last refund of it (before migration 040, when Warden recorded it); null while none. */
  refunded_at: number | null;
}

/** A payment intent that paid an invoice not yet seen paid (`invoice_payment.paid` before `invoice.paid`; migration 041). */
export interface InvoicePaymentLinksTable {
  workspace_id: string;
  env: Env;
  payment_intent: string;
  invoice_id: string;
  created_at: number;
}

/** A subscription's paid invoice, counted once as its revenue (migration 040). */
export interface SubscriptionInvoicesTable {
  workspace_id: string;
  env: Env;
  /** Stripe's invoice id; for an invoice counted before migration 040, its first payment intent's id. */
  invoice_id: string;
  subscription_id: string;
  amount_cents: number | null;
  currency: string | null;
  /** When Stripe was paid (docs/decisions.md, Payments, "Times stored"). */
  paid_at: number;
  created_at: number;
  /** What the vendor earns of it after the processor's fee and tax, and those two, where the processor says so (Paddle; migration 053): null otherwise. */
  earnings_cents: number | null;
  fee_cents: number | null;
  tax_cents: number | null;
}

/** A change of plan or of seats the processor reported for a subscription (migration 046). */
export interface SubscriptionChangesTable {
  workspace_id: string;
  env: Env;
  subscription_id: string;
  /** The processor's time of the report that made the change. */
  at: number;
  /** Both null when the plan did not change. */
  plan_from: string | null;
  plan_to: string | null;
  /** Both null when the seats did not change. */
  seats_from: number | null;
  seats_to: number | null;
}

export interface DisputesTable {
  workspace_id: string;
  env: Env;
  id: string;
  licence_id: string | null;
  subscription_id: string | null;
  product_kind: ProductKind;
  product_id: string;
  payment_intent: string;
  amount_cents: number;
  currency: string;
  reason: string;
  status: string;
  respond_by: number | null;
  opened_at: number;
  closed_at: number | null;
}

/** A mailed code or one-time link for an owner of the dashboard (migration 013). */
export interface OwnerCodesTable {
  id: string;
  purpose: "sign-in" | "link" | "confirm";
  owner_id: string | null;
  email: string;
  binding: string | null;
  code_hash: string;
  /** A confirmation code's action and target, hashed; null for sign-in codes and links. */
  action_hash: string | null;
  attempts: number;
  created_at: number;
  expires_at: number;
  closed_at: number | null;
}

export interface OwnerSessionsTable {
  id: string;
  owner_id: string;
  token_hash: string;
  created_at: number;
  last_seen_at: number;
  ended_at: number | null;
  user_agent: string | null;
  address: string | null;
}

/** A person's web session on the hosted pages of one workspace environment (migration 023). */
export interface CustomerSessionsTable {
  id: string;
  workspace_id: string;
  env: Env;
  person_id: string;
  licence_id: string | null;
  token_hash: string;
  created_at: number;
  last_seen_at: number;
  ended_at: number | null;
  /** The device whose page ticket opened (or last reached) this session; null for a sign-in by code (migration 045). */
  device_id: string | null;
}

/** One-time tokens between the hosted pages and an extension: hand-off codes and page tickets (migration 023). */
export interface CustomerExchangeTokensTable {
  id: string;
  /** hand_off: a page's code for the extension; page_ticket: an extension's ticket for a page; page_question: a ticket held for the page's question "Continue as …?". */
  kind: "hand_off" | "page_ticket" | "page_question";
  token_hash: string;
  workspace_id: string;
  env: Env;
  tool_id: string;
  person_id: string;
  licence_id: string | null;
  code_challenge: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** A page ticket's device (and its held ticket's); null for a hand-off code (migration 045). */
  device_id: string | null;
}

export interface AuditLogTable {
  id: string;
  owner_id: string;
  owner_email: string;
  workspace_id: string | null;
  env: Env | null;
  action: string;
  subject: string | null;
  created_at: number;
}

/** A secret sealed for the one dashboard page that shows it, bound to a session (migration 028). */
export interface ShownOnceTable {
  id: string;
  session_id: string;
  /** The workspace environment whose page shows it. */
  scope: string;
  /** Null once shown. */
  content_sealed: string | null;
  expires_at: number;
  created_at: number;
}

/** A mail to send, sent, or still being retried (migration 022). */
export interface MailOutboxTable {
  id: string;
  kind: string;
  recipient: string;
  content_sealed: string | null;
  attempts: Generated<number>;
  next_attempt_at: number | null;
  locked_by: string | null;
  last_error: string | null;
  created_at: number;
  sent_at: number | null;
}

/** A person whose access may have changed, written with the change (migration 026): the feed of client/access-watch.ts. */
export interface AccessChangesTable {
  seq: Generated<number>;
  workspace_id: string;
  env: Env;
  person_id: string;
  changed_at: number;
}

/** A workspace's branding on its hosted customer pages (migration 024); no row: none set. */
export interface WorkspaceBrandsTable {
  workspace_id: string;
  /** `#rrggbb`, checked for contrast with white text when set. */
  accent: string | null;
  /** PNG, JPEG or WebP bytes, checked by their signature when uploaded. */
  logo: Buffer | null;
  logo_type: "image/png" | "image/jpeg" | "image/webp" | null;
  /** Changes with every change: the stylesheet's and logo's addresses carry it. */
  version: number;
  updated_at: number;
  /** The hosted pages' language when the buyer's browser names none Warden speaks (migration 049); null: English. */
  language: string | null;
}

/** A vendor's name of a product, plan, feature or meter in one language (migration 049); no row: the default name. */
export interface TranslatedNamesTable {
  workspace_id: string;
  language: string;
  kind: "product" | "plan" | "feature" | "meter";
  product_kind: ProductKind;
  product_id: string;
  /** The plan's, feature's or meter's id; "" for the product itself. */
  item_id: string;
  name: string;
  updated_at: number;
}

/** A figure of one UTC day behind Insights (migration 031): added to in the change's transaction. */
export interface InsightDaysTable {
  workspace_id: string;
  env: Env;
  metric: string;
  day: string;
  /** "tool:<id>", "bundle:<id>", or "*" for a figure counted once over every tool. */
  scope: string;
  currency: string;
  plan_id: string;
  value: number;
}

/** A day a person had an access check, per tool scope and over all ("*") (migration 031). */
export interface InsightActiveDaysTable {
  workspace_id: string;
  env: Env;
  scope: string;
  person_id: string;
  day: string;
}

/** Changes of insight_days' figures not yet folded into them and their months (migration 054). */
export type InsightPendingTable = InsightDaysTable;

/** insight_days' additive figures added up per UTC month 'YYYY-MM' (migration 034). */
export interface InsightMonthsTable {
  workspace_id: string;
  env: Env;
  metric: string;
  month: string;
  scope: string;
  currency: string;
  plan_id: string;
  value: number;
}

/** A person's number of active days in a UTC month 'YYYY-MM', per scope (migration 034). */
export interface InsightActiveMonthsTable {
  workspace_id: string;
  env: Env;
  scope: string;
  month: string;
  person_id: string;
  days: number;
}

/** The first day each window of the most-active-unpaid list counts, per scope and span '7d' | '30d' | '90d' | '12m' (migration 036). */
export interface InsightWindowStartsTable {
  workspace_id: string;
  env: Env;
  scope: string;
  span: string;
  start: string;
}

/** A person's number of active days in the scope on their window's start or after (migration 036). */
export interface InsightActiveWindowsTable {
  workspace_id: string;
  env: Env;
  scope: string;
  span: string;
  person_id: string;
  days: number;
}

/** A person's newest active day, per scope (migration 031). */
export interface InsightLastActiveTable {
  workspace_id: string;
  env: Env;
  scope: string;
  person_id: string;
  day: string;
}

/** A day a device had an access check (migration 031). */
export interface InsightDeviceDaysTable {
  device_id: string;
  day: string;
}

/** What a subscription adds to MRR now, and whether it ever added any (migration 031). */
export interface InsightSubscriptionsTable {
  workspace_id: string;
  env: Env;
  subscription_id: string;
  currency: string;
  mrr: number;
  contributed: number;
}

export interface Database {
  owners: OwnersTable;
  workspaces: WorkspacesTable;
  workspace_owners: WorkspaceOwnersTable;
  tools: ToolsTable;
  bundles: BundlesTable;
  bundle_tools: BundleToolsTable;
  plans: PlansTable;
  tool_features: ToolFeaturesTable;
  tool_meters: ToolMetersTable;
  plan_terms: PlanTermsTable;
  meter_usage: MeterUsageTable;
  meter_credits: MeterCreditsTable;
  meter_locks: MeterLocksTable;
  insight_meter_days: InsightMeterDaysTable;
  allowance_runouts: AllowanceRunoutsTable;
  api_keys: ApiKeysTable;
  settings: SettingsTable;
  signing_keys: SigningKeysTable;
  counters: CountersTable;
  auth_version: AuthVersionTable;
  people: PeopleTable;
  licences: LicencesTable;
  subscriptions: SubscriptionsTable;
  grants: GrantsTable;
  devices: DevicesTable;
  sign_in_codes: SignInCodesTable;
  customers: CustomersTable;
  idempotency_keys: IdempotencyKeysTable;
  events: EventsTable;
  webhook_endpoints: WebhookEndpointsTable;
  endpoint_leases: EndpointLeasesTable;
  deliveries: DeliveriesTable;
  delivery_attempts: DeliveryAttemptsTable;
  stripe_accounts: StripeAccountsTable;
  billing_locks: BillingLocksTable;
  stripe_events: StripeEventsTable;
  paddle_accounts: PaddleAccountsTable;
  paddle_events: PaddleEventsTable;
  paddle_refunds: PaddleRefundsTable;
  paddle_plan_links: PaddlePlanLinksTable;
  paddle_checkouts: PaddleCheckoutsTable;
  subscription_buyers: SubscriptionBuyersTable;
  stripe_plan_links: StripePlanLinksTable;
  stripe_reconcile_runs: StripeReconcileRunsTable;
  stripe_reconcile_leases: StripeReconcileLeasesTable;
  subscription_payments: SubscriptionPaymentsTable;
  subscription_invoices: SubscriptionInvoicesTable;
  invoice_payment_links: InvoicePaymentLinksTable;
  disputes: DisputesTable;
  subscription_changes: SubscriptionChangesTable;
  owner_codes: OwnerCodesTable;
  owner_sessions: OwnerSessionsTable;
  audit_log: AuditLogTable;
  owner_invitations: OwnerInvitationsTable;
  mail_outbox: MailOutboxTable;
  customer_sessions: CustomerSessionsTable;
  customer_exchange_tokens: CustomerExchangeTokensTable;
  shown_once: ShownOnceTable;
  access_changes: AccessChangesTable;
  workspace_brands: WorkspaceBrandsTable;
  translated_names: TranslatedNamesTable;
  insight_days: InsightDaysTable;
  insight_months: InsightMonthsTable;
  insight_pending: InsightPendingTable;
  insight_active_months: InsightActiveMonthsTable;
  insight_window_starts: InsightWindowStartsTable;
  insight_active_windows: InsightActiveWindowsTable;
  insight_active_days: InsightActiveDaysTable;
  insight_device_days: InsightDeviceDaysTable;
  insight_last_active: InsightLastActiveTable;
  insight_subscriptions: InsightSubscriptionsTable;
}
