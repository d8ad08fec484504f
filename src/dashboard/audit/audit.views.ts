import type { AuditEntry } from "../../audit/audit.service.js";
import { type Html, html } from "../shared/html.js";
import { appPage, emptyState, envBadge, type Frame, pageHeading, scrollBox, time } from "../shared/layout.js";

const ACTIONS: Record<string, string> = {
  signed_in: "Signed in",
  signed_out: "Signed out",
  "session.ended": "Ended another session",
  "key.created": "Created an API key",
  "key.revoked": "Revoked an API key",
  "endpoint.added": "Added a webhook endpoint",
  "endpoint.updated": "Edited a webhook endpoint",
  "endpoint.removed": "Deleted a webhook endpoint",
  "endpoint.secret_revealed": "Revealed a webhook signing secret",
  "endpoint.secret_rotated": "Rotated a webhook signing secret",
  "endpoint.enabled": "Enabled a webhook endpoint",
  "endpoint.disabled": "Disabled a webhook endpoint",
  "endpoint.recovered": "Recovered failed deliveries",
  "event.example_sent": "Sent a test event",
  "delivery.resent": "Resent a delivery",
  "grant.created": "Granted access",
  "grant.revoked": "Revoked a grant",
  "licence.refunded": "Refunded a licence",
  "subscription.set_to_cancel": "Set a subscription to end at its period's end",
  "subscription.ended": "Ended a subscription now",
  "tool.created": "Added a tool",
  "tool.updated": "Changed a tool",
  "plan.created": "Added a plan",
  "plan.renamed": "Renamed a plan",
  "plan.retired": "Retired a plan",
  "plan.stripe_linked": "Changed a plan's Stripe prices",
  "bundle.created": "Added a bundle",
  "bundle.tools_changed": "Changed a bundle's tools",
  "stripe.connected": "Connected Stripe",
  "stripe.disconnected": "Disconnected Stripe",
  "stripe.reconciled": "Reconciled with Stripe",
  "owner.invited": "Invited a co-owner",
  "owner.invitation_withdrawn": "Withdrew an invitation",
  "owner.joined": "Joined as a co-owner",
  "owner.removed": "Removed an owner",
  "workspace.branding_changed": "Changed the customer pages' branding",
};

export function auditView(frame: Frame, entries: AuditEntry[]): Html {
  const body =
    entries.length === 0
      ? emptyState(
          "Nothing recorded yet",
          "Every sign-in, key created or revoked and webhook change in your workspaces will be listed here, with who did it and when.",
        )
      : html`<div class="table-wrap audit-table"${scrollBox("Audit log")}><table>
<thead><tr><th>When</th><th>Who</th><th>What</th><th>Workspace</th><th>Environment</th><th>On</th></tr></thead>
<tbody>${entries.map(
          (e) => html`<tr>
<td>${time(e.createdAt)}</td>
<td>${e.ownerEmail}</td>
<td>${ACTIONS[e.action] ?? e.action}</td>
<td>${e.workspaceSlug ?? html`<span class="muted">Account</span>`}</td>
<td>${e.env ? envBadge(e.env) : html`<span class="muted">—</span>`}</td>
<td>${e.subject ? html`<code>${e.subject}</code>` : html`<span class="muted">—</span>`}</td>
</tr>`,
        )}</tbody>
</table></div>`;
  return appPage(
    "Audit log",
    frame,
    html`${pageHeading("Audit log", "What the owners of your workspaces did, newest first: the last 200 actions.")}
<section class="panel">${body}</section>`,
  );
}
