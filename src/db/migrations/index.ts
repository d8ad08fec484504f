import type { Migration } from "kysely";
import * as initial from "./001-initial.js";
import * as webhooks from "./002-webhooks.js";
import * as deliveryOrder from "./003-delivery-order.js";
import * as payments from "./004-payments.js";
import * as client from "./005-client.js";
import * as clientPurchases from "./006-client-purchases.js";
import * as deliveryClaim from "./007-delivery-claim.js";
import * as authVersion from "./008-auth-version.js";
import * as pendingDeliveries from "./009-pending-deliveries.js";
import * as deliveryFillfactor from "./010-delivery-fillfactor.js";
import * as sourceKinds from "./011-source-kinds.js";
import * as endpointLeases from "./012-endpoint-leases.js";
import * as dashboard from "./013-dashboard.js";
import * as deliveryRetryAt from "./014-delivery-retry-at.js";
import * as retention from "./015-retention.js";
import * as signingKeys from "./016-signing-keys.js";
import * as configure from "./017-configure.js";
import * as ownerInvitations from "./018-owner-invitations.js";
import * as secretRotation from "./019-secret-rotation.js";
import * as listIndexes from "./020-list-indexes.js";
import * as ownerSessionsDetail from "./021-owner-sessions-detail.js";
import * as mailOutbox from "./022-mail-outbox.js";
import * as customerSessions from "./023-customer-sessions.js";
import * as branding from "./024-branding.js";
import * as accessChanges from "./026-access-changes.js";
import * as customerSearch from "./027-customer-search.js";
import * as endpointEditShownOnce from "./028-endpoint-edit-shown-once.js";
import * as stripeReconcile from "./029-stripe-reconcile.js";
import * as mailOutboxSent from "./030-mail-outbox-sent.js";
import * as insights from "./031-insights.js";
import * as counterLeases from "./032-counter-leases.js";
import * as workspaceAudit from "./033-workspace-audit.js";
import * as insightsSpeed from "./034-insights-speed.js";
import * as subscriptionRefunds from "./035-subscription-refunds.js";
import * as insightWindows from "./036-insight-windows.js";
import * as trialOutcomes from "./037-trial-outcomes.js";
import * as insightFiguresHot from "./038-insight-figures-hot.js";
import * as customerCountsPerStatement from "./039-customer-counts-per-statement.js";
import * as subscriptionInvoices from "./040-subscription-invoices.js";
import * as invoicePaymentLinks from "./041-invoice-payment-links.js";
import * as usage from "./042-usage.js";
import * as meterLocks from "./043-meter-locks.js";
import * as meterInsights from "./044-meter-insights.js";
import * as sessionDevice from "./045-session-device.js";
import * as moneyHistory from "./046-money-history.js";
import * as paddle from "./047-paddle.js";
import * as wrongKeyBlocks from "./048-wrong-key-blocks.js";
import * as buyerLanguage from "./049-buyer-language.js";
import * as paddlePlanLinks from "./050-paddle-plan-links.js";
import * as moneyAtAGlance from "./052-money-at-a-glance.js";
import * as processorEarnings from "./053-processor-earnings.js";
import * as insightPending from "./054-insight-pending.js";
import * as personFirstActivityKeys from "./055-person-first-activity-keys.js";
import * as paddleCheckouts from "./056-paddle-checkouts.js";

// Numbered, forward only. A new migration is a new file added here; never edit one that shipped.
export const migrations: Record<string, Migration> = {
  "001-initial": initial,
  "002-webhooks": webhooks,
  "003-delivery-order": deliveryOrder,
  "004-payments": payments,
  "005-client": client,
  "006-client-purchases": clientPurchases,
  "007-delivery-claim": deliveryClaim,
  "008-auth-version": authVersion,
  "009-pending-deliveries": pendingDeliveries,
  "010-delivery-fillfactor": deliveryFillfactor,
  "011-source-kinds": sourceKinds,
  "012-endpoint-leases": endpointLeases,
  "013-dashboard": dashboard,
  "014-delivery-retry-at": deliveryRetryAt,
  "015-retention": retention,
  "016-signing-keys": signingKeys,
  "017-configure": configure,
  "018-owner-invitations": ownerInvitations,
  "019-secret-rotation": secretRotation,
  "020-list-indexes": listIndexes,
  "021-owner-sessions-detail": ownerSessionsDetail,
  "022-mail-outbox": mailOutbox,
  "023-customer-sessions": customerSessions,
  "024-branding": branding,
  "026-access-changes": accessChanges,
  "027-customer-search": customerSearch,
  "028-endpoint-edit-shown-once": endpointEditShownOnce,
  "029-stripe-reconcile": stripeReconcile,
  "030-mail-outbox-sent": mailOutboxSent,
  "031-insights": insights,
  "032-counter-leases": counterLeases,
  "033-workspace-audit": workspaceAudit,
  "034-insights-speed": insightsSpeed,
  "035-subscription-refunds": subscriptionRefunds,
  "036-insight-windows": insightWindows,
  "037-trial-outcomes": trialOutcomes,
  "038-insight-figures-hot": insightFiguresHot,
  "039-customer-counts-per-statement": customerCountsPerStatement,
  "040-subscription-invoices": subscriptionInvoices,
  "041-invoice-payment-links": invoicePaymentLinks,
  "042-usage": usage,
  "043-meter-locks": meterLocks,
  "044-meter-insights": meterInsights,
  "045-session-device": sessionDevice,
  "046-money-history": moneyHistory,
  "047-paddle": paddle,
  "048-wrong-key-blocks": wrongKeyBlocks,
  "049-buyer-language": buyerLanguage,
  "050-paddle-plan-links": paddlePlanLinks,
  "052-money-at-a-glance": moneyAtAGlance,
  "053-processor-earnings": processorEarnings,
  "054-insight-pending": insightPending,
  "055-person-first-activity-keys": personFirstActivityKeys,
  "056-paddle-checkouts": paddleCheckouts,
};
