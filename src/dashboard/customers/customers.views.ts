import type { Customer, CustomerListItem } from "../../customers/customer.schema.js";
import type { Grant } from "../../grants/grant.schema.js";
import type { Tool } from "../../workspaces/workspace.types.js";
import { type Html, html } from "../shared/html.js";
import { appPage, csrfField, emptyState, envBadge, type Frame, notice, pageHeading, sectionPath, time } from "../shared/layout.js";

export const customersPath = (frame: Frame) => {
  const here = frame.current;
  if (!here) throw new Error("a customers page has a workspace");
  return sectionPath(here.workspace.slug, here.env, "customers");
};
export const customerPath = (frame: Frame, tool: string, email: string) => `${customersPath(frame)}/${encodeURIComponent(tool)}/${encodeURIComponent(email)}`;

const VIA: Record<string, string> = { licence: "a licence", subscription: "a subscription", trial: "a trial", grant: "a grant" };

function entitledBadge(entitled: boolean, via: string | null): Html {
  return entitled
    ? html`<span class="badge badge-ok">Entitled</span> <span class="state-note">via ${VIA[via ?? ""] ?? via}</span>`
    : html`<span class="badge badge-off">Not entitled</span>`;
}

export type EntitledFilter = "all" | "yes" | "no";

export function customersView(
  frame: Frame,
  input: { tools: Tool[]; tool: string | null; entitled: EntitledFilter; customers: CustomerListItem[]; next: string | null; email?: string; error?: string },
): Html {
  const env = frame.current?.env ?? "test";
  const option = (value: string, label: string, selected: string) =>
    html`<option value="${value}"${value === selected ? html` selected` : ""}>${label}</option>`;
  const tool = input.tool;
  const list =
    tool === null
      ? emptyState("No tools yet", "Your operator adds tools to the workspace; their customers appear here.")
      : input.customers.length === 0
        ? emptyState("No customers match", "People appear here once they buy, sign in, start a trial or are granted the tool.")
        : html`<div class="table-wrap"><table>
<thead><tr><th>Address</th><th>Access</th><th>Account</th><th>Devices</th><th>Last active</th><th>Since</th></tr></thead>
<tbody>${input.customers.map(
            (c) => html`<tr>
<td><a href="${customerPath(frame, tool, c.email)}">${c.email}</a></td>
<td>${entitledBadge(c.entitled, c.via)}</td>
<td>${c.account ? "Signed in" : html`<span class="muted">None</span>`}</td>
<td class="num">${c.devices}</td>
<td>${c.last_active_at === null ? html`<span class="muted">Never</span>` : time(Date.parse(c.last_active_at))}</td>
<td>${time(Date.parse(c.since))}</td>
</tr>`,
          )}</tbody>
</table></div>
${input.next ? html`<p class="pager"><a class="button small" href="${input.next}">Older customers →</a></p>` : ""}`;
  return appPage(
    "Customers",
    frame,
    html`${pageHeading("Customers", html`Everyone who holds a tool or has signed in to it, newest first. ${envBadge(env)}`)}
${input.error ? notice("error", input.error) : ""}
<section class="panel">
<form method="get" action="${customersPath(frame)}" class="inline-form filters">
<div class="field"><label for="tool">Tool</label>
<select id="tool" name="tool">${input.tools.map((t) => option(t.id, t.name, tool ?? ""))}</select></div>
<div class="field"><label for="entitled">Access</label>
<select id="entitled" name="entitled">${option("all", "Everyone", input.entitled)}${option("yes", "Entitled now", input.entitled)}${option("no", "Not entitled", input.entitled)}</select></div>
<button class="button" type="submit">Show</button>
</form>
<form method="get" action="${customersPath(frame)}/search" class="inline-form filters">
<input type="hidden" name="tool" value="${tool ?? ""}">
<div class="field"><label for="email">Find by address</label><input id="email" name="email" type="email" maxlength="254" placeholder="person@example.com" value="${input.email ?? ""}"></div>
<button class="button primary" type="submit">Find</button>
</form>
<p class="hint">As on the API, each page of the list counts its rows against the day's rows read, and a customer's page counts two lookups (the customer, and their grants).</p>
</section>
<section class="panel">${list}</section>`,
  );
}

function grantRow(frame: Frame, tool: string, email: string, g: Grant): Html {
  const state =
    g.revoked_at !== null
      ? html`<span class="badge badge-off">Revoked</span>`
      : g.live
        ? html`<span class="badge badge-ok">Live</span>`
        : html`<span class="badge badge-off">Ended</span>`;
  return html`<tr>
<td>${g.kind === "trial" ? "Trial" : "Grant"}</td>
<td>${state}</td>
<td>${g.note === null ? html`<span class="muted">No note</span>` : html`<span class="note">${g.note}</span>`}</td>
<td>${time(Date.parse(g.starts_at))}</td>
<td>${g.ends_at === null ? html`<span class="muted">Until revoked</span>` : time(Date.parse(g.ends_at))}</td>
<td class="actions">${
    g.kind === "grant" && g.revoked_at === null
      ? html`<form method="post" action="${customerPath(frame, tool, email)}/grants/${encodeURIComponent(g.id)}/revoke">${csrfField(frame.csrf)}<button class="button small danger-outline" type="submit">Revoke</button></form>`
      : ""
  }</td>
</tr>`;
}

export function customerView(
  frame: Frame,
  input: {
    tool: Tool;
    customer: Customer | null;
    email: string;
    grants: Grant[];
    flash: { granted?: boolean; revoked?: boolean };
    error?: string;
    form?: { days: string; note: string };
  },
): Html {
  const { customer: c, tool, email } = input;
  const facts = c
    ? html`<dl class="facts">
<dt>Access</dt><dd>${entitledBadge(c.entitled, c.via)}</dd>
<dt>Account</dt><dd>${c.account ? "Signed in to the workspace" : html`<span class="muted">Never signed in</span>`}</dd>
<dt>Plan</dt><dd>${c.plan ? html`${c.plan.name} <span class="muted">${c.plan.billing === "subscription" ? `per ${c.plan.interval ?? "period"}` : "one-time"}</span>` : html`<span class="muted">None</span>`}</dd>
<dt>Paid</dt><dd>${c.paid_at === null ? html`<span class="muted">Never</span>` : time(Date.parse(c.paid_at))}</dd>
<dt>Subscription</dt><dd>${
        c.subscription
          ? html`${c.subscription.status} · ${c.subscription.cancelAtPeriodEnd ? "ends" : "renews"} ${time(Date.parse(c.subscription.periodEnd))}`
          : html`<span class="muted">None</span>`
      }</dd>
<dt>Trial</dt><dd>${c.trial ? html`${c.trial.active ? "Active, ends" : "Ended"} ${time(Date.parse(c.trial.endsAt))}` : html`<span class="muted">None</span>`}</dd>
</dl>`
    : notice("info", html`No customer with this address for <strong>${tool.name}</strong> yet. Granting access below makes them one.`);
  const grants =
    input.grants.length === 0
      ? emptyState("No grants or trials", "Grant access below: for a number of days, or until you revoke it.")
      : html`<div class="table-wrap"><table>
<thead><tr><th>Kind</th><th>State</th><th>Note</th><th>Starts</th><th>Ends</th><th><span class="sr-only">Actions</span></th></tr></thead>
<tbody>${input.grants.map((g) => grantRow(frame, tool.id, email, g))}</tbody>
</table></div>`;
  return appPage(
    "Customer",
    frame,
    html`${pageHeading(email, html`Customer of <strong>${tool.name}</strong>`)}
${input.flash.granted ? notice("success", "Access granted. The customer holds the tool from their next check.") : ""}
${input.flash.revoked ? notice("success", "Grant revoked. Unless another source entitles them, the customer loses the tool at their next check.") : ""}
<section class="panel">${facts}</section>
<section class="panel">
<div class="panel-head"><h2>Grants and trials</h2></div>
${grants}
</section>
<section class="panel narrow">
<div class="panel-head"><h2>Grant access</h2></div>
${input.error ? notice("error", input.error) : ""}
<form method="post" action="${customerPath(frame, tool.id, email)}/grants" class="stack">
${csrfField(frame.csrf)}
<label for="days">Days <span class="muted">(empty or 0: until revoked)</span></label>
<input id="days" name="days" inputmode="numeric" pattern="[0-9]*" maxlength="4" value="${input.form?.days ?? "30"}">
<label for="note">Note <span class="muted">(optional, for you and the other owners)</span></label>
<input id="note" name="note" maxlength="200" placeholder="e.g. Conference speaker" value="${input.form?.note ?? ""}">
<div class="row"><button class="button primary" type="submit">Grant ${tool.name}</button></div>
</form>
</section>`,
  );
}
