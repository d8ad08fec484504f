import { AUDIT_ACTIONS, type AuditAction, type AuditEntry } from "../../audit/audit.service.js";
import type { WorkspaceOwner } from "../../workspaces/workspace-owners.store.js";
import { type Html, html } from "../shared/html.js";
import { appPage, dateFieldsHint, emptyState, envBadge, type Frame, formError, pageHeading, scrollBox, sectionPath, time } from "../shared/layout.js";
import { secondaryId } from "../shared/names.js";

const ACTIONS: Record<AuditAction, string> = {
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
  "plan.paddle_linked": "Changed a plan's Paddle prices",
  "plan.terms_changed": "Changed a plan's features, allowances or credits",
  "feature.added": "Added a feature",
  "feature.renamed": "Renamed a feature",
  "meter.added": "Added a meter",
  "meter.updated": "Changed a meter",
  "credits.adjusted": "Adjusted a customer's credits",
  "bundle.created": "Added a bundle",
  "bundle.tools_changed": "Changed a bundle's tools",
  "stripe.connected": "Connected Stripe",
  "stripe.disconnected": "Disconnected Stripe",
  "stripe.reconciled": "Reconciled with Stripe",
  "paddle.connected": "Connected Paddle",
  "paddle.disconnected": "Disconnected Paddle",
  "owner.invited": "Invited a co-owner",
  "owner.invitation_withdrawn": "Withdrew an invitation",
  "owner.joined": "Joined as a co-owner",
  "owner.removed": "Removed an owner",
  "workspace.branding_changed": "Changed the customer pages' branding",
  "names.translated": "Changed a name in other languages",
};

const actionLabel = (action: string) => (ACTIONS as Record<string, string>)[action] ?? action;

/** `names`: a customer's address by the entry's place and subject (`entryPlace`). */
export function auditView(frame: Frame, entries: AuditEntry[], names: ReadonlyMap<string, string>): Html {
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
<td>${actionLabel(e.action)}</td>
<td>${e.workspaceSlug ?? html`<span class="muted">Account</span>`}</td>
<td>${e.env ? envBadge(e.env) : html`<span class="muted">—</span>`}</td>
<td>${subjectCell(e.subject, e.subject === null ? undefined : names.get(entryPlace(e, e.subject)))}</td>
</tr>`,
        )}</tbody>
</table></div>`;
  // Titled as its place in the navigation, so the breadcrumbs say it once: Account › All workspaces' log.
  return appPage(
    "All workspaces' log",
    frame,
    html`${pageHeading("All workspaces' log", "What the owners of your workspaces did, and your own sign-ins, newest first: the last 200 actions.")}
<section class="panel">${body}</section>`,
  );
}

/** Where an entry of the account's log happened and what about: ids are unique only within a workspace environment. */
export const entryPlace = (e: Pick<AuditEntry, "workspaceId" | "env">, subject: string) => `${e.workspaceId ?? ""}/${e.env ?? ""}/${subject}`;

/** What an entry was about: its name with the id under it, or the id (or address) alone. */
function subjectCell(subject: string | null, name: string | undefined): Html {
  if (subject === null) return html`<span class="muted">—</span>`;
  return name === undefined ? html`<code>${subject}</code>` : html`${name}${secondaryId(subject)}`;
}

/** The filter form's fields, by the use case's parameter they carry. */
const FIELD_IDS = { owner: "owner", action: "action", from: "from", to: "to" };

export function workspaceAuditView(
  frame: Frame,
  input: {
    data: AuditEntry[];
    olderCursor: string | null;
    newerCursor: string | null;
    filters: { owner: string; action: string; from: string; to: string };
    owners: WorkspaceOwner[];
    /** What the subjects on the page are called, by id, where they have a name. */
    names: ReadonlyMap<string, string>;
    error?: string;
    errorParam?: string | undefined;
  },
): Html {
  const here = frame.current;
  if (!here) throw new Error("the workspace log needs a workspace on screen");
  const path = sectionPath(here.workspace.slug, here.env, "audit");
  const { filters } = input;
  const err = formError(input.error, input.errorParam, FIELD_IDS);
  const pageLink = (cursor: { older: string } | { newer: string }) => `${path}?${new URLSearchParams({ ...filters, ...cursor })}`;
  const option = (value: string, label: string, chosen: string) => html`<option value="${value}"${value === chosen ? html` selected` : ""}>${label}</option>`;
  const filtered = Object.values(filters).some((v) => v !== "");
  const pager =
    input.newerCursor || input.olderCursor
      ? html`<nav class="pager" aria-label="Pages of the log">${input.newerCursor ? html`<a class="button small" href="${pageLink({ newer: input.newerCursor })}">← Newer</a> ` : ""}${
          input.olderCursor ? html`<a class="button small" href="${pageLink({ older: input.olderCursor })}">Older →</a>` : ""
        }</nav>`
      : "";
  const list =
    input.data.length === 0
      ? input.error
        ? ""
        : emptyState(
            filtered ? "Nothing matches" : "Nothing recorded yet",
            filtered
              ? "No action in this workspace matches these filters. Widen the dates or choose any owner or action."
              : "Every change an owner makes in this workspace will be listed here, with who did it and when.",
          )
      : // Scrolls sideways at 390 px with each id whole, rather than breaking ids a letter a line.
        html`<div class="table-wrap"${scrollBox("Audit log")}><table>
<thead><tr><th>When</th><th>Who</th><th>What</th><th>Environment</th><th>On</th></tr></thead>
<tbody>${input.data.map(
          (e) => html`<tr>
<td>${time(e.createdAt)}</td>
<td>${e.ownerEmail}</td>
<td>${actionLabel(e.action)}</td>
<td>${e.env ? envBadge(e.env) : html`<span class="muted">Both</span>`}</td>
<td>${subjectCell(e.subject, e.subject === null ? undefined : input.names.get(e.subject))}</td>
</tr>`,
        )}</tbody>
</table></div>
${pager}`;
  return appPage(
    "Audit log",
    frame,
    html`${pageHeading("Audit log", html`What the owners did in this workspace's ${here.env} environment and to the whole workspace, newest first, 50 a page. ${envBadge(here.env)}`)}
${err.notice}
<section class="panel">
<form method="get" action="${path}" class="inline-form filters" role="search" aria-label="Filter the log">
<div class="field"><label for="owner">Who</label>
<select id="owner" name="owner"${err.on("owner")}>${option("", "Any owner", filters.owner)}${input.owners.map((o) => option(o.ownerId, o.email, filters.owner))}</select></div>
<div class="field"><label for="action">What</label>
<select id="action" name="action"${err.on("action")}>${option("", "Any action", filters.action)}${AUDIT_ACTIONS.map((a) => option(a, ACTIONS[a], filters.action))}</select></div>
<div class="field"><label for="from">From (UTC day)</label><input id="from" name="from" type="date" value="${filters.from}"${err.on("from")}></div>
<div class="field"><label for="to">To (UTC day, included)</label><input id="to" name="to" type="date" value="${filters.to}"${err.on("to")}></div>
<button class="button primary" type="submit">Show</button>
</form>
<p class="hint">Days are UTC days, as every time on this page is. Entries of owners who have since left stay in the log under their address.</p>
${dateFieldsHint}
</section>
${list ? html`<section class="panel">${list}</section>` : ""}`,
  );
}
