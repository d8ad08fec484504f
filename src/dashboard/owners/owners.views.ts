import type { OwnerInvitation, WorkspaceOwner } from "../../workspaces/workspace-owners.service.js";
import { type Html, html } from "../shared/html.js";
import {
  appPage,
  cardPage,
  csrfField,
  currentSectionPath,
  DASHBOARD,
  emptyState,
  type Frame,
  fieldErrorAttributes,
  fieldErrorNotice,
  notice,
  pageHeading,
  scrollBox,
  time,
} from "../shared/layout.js";

export const ownersPath = (frame: Frame) => currentSectionPath(frame, "owners");

export interface OwnersPage {
  owners: WorkspaceOwner[];
  invitations: OwnerInvitation[];
  flash?: { invited?: string; removed?: string; withdrawn?: string };
  form?: { email?: string; error?: string };
}

export function ownersView(frame: Frame, page: OwnersPage): Html {
  const path = ownersPath(frame);
  const only = page.owners.length === 1;
  const flash = page.flash ?? {};
  const form = page.form ?? {};
  const owners = html`<div class="table-wrap"${scrollBox("Owners")}><table>
<thead><tr><th>Address</th><th>Owner since</th><th><span class="sr-only">Actions</span></th></tr></thead>
<tbody>${page.owners.map(
    (o) => html`<tr>
<td>${o.email}${o.email === frame.email ? html` <span class="badge badge-pending">You</span>` : ""}${o.suspendedAt !== null ? html` <span class="badge badge-off">Suspended</span>` : ""}</td>
<td>${time(o.addedAt)}</td>
<td class="actions">${only ? html`<span class="muted">The only owner</span>` : html`<a class="button small danger-outline" href="${path}/remove?email=${encodeURIComponent(o.email)}">Remove…</a>`}</td>
</tr>`,
  )}</tbody>
</table></div>`;
  const invitations =
    page.invitations.length === 0
      ? emptyState("No open invitations", "Invite a co-owner below: they get a mail, and accept by signing in with that address.")
      : html`<div class="table-wrap"${scrollBox("Open invitations")}><table>
<thead><tr><th>Address</th><th>Invited</th><th>Expires</th><th><span class="sr-only">Actions</span></th></tr></thead>
<tbody>${page.invitations.map(
          (i) => html`<tr>
<td>${i.email}</td>
<td>${time(i.createdAt)}</td>
<td>${time(i.expiresAt)}</td>
<td class="actions"><form method="post" action="${path}/withdraw">${csrfField(frame.csrf)}<input type="hidden" name="email" value="${i.email}"><button class="button small" type="submit">Withdraw</button></form></td>
</tr>`,
        )}</tbody>
</table></div>`;
  return appPage(
    "Owners",
    frame,
    html`${pageHeading("Owners", "People who run this workspace with you, in test and in live. Each signs in with a code mailed to their address; there are no passwords.")}
${flash.invited ? notice("success", html`Invitation sent to <strong>${flash.invited}</strong>. It works for 7 days: they accept by signing in with that address.`) : ""}
${flash.removed ? notice("success", html`<strong>${flash.removed}</strong> is no longer an owner. Their next page of this workspace is refused.`) : ""}
${flash.withdrawn ? notice("info", html`The invitation of <strong>${flash.withdrawn}</strong> is withdrawn.`) : ""}
<section class="panel">
<div class="panel-head"><h2>${page.owners.length === 1 ? "1 owner" : `${page.owners.length} owners`}</h2></div>
${owners}
</section>
<section class="panel">
<div class="panel-head"><h2>Invitations</h2></div>
${invitations}
</section>
<section class="panel">
<div class="panel-head"><h2>Invite a co-owner</h2></div>
<p class="panel-text">A co-owner can do everything you can here: change the catalogue, connect Stripe, create live keys, refund, and invite or remove owners.</p>
<form method="post" action="${path}/invite" class="inline-form">
${csrfField(frame.csrf)}
<div class="field"><label for="email">Their address</label>
<input id="email" name="email" type="email" maxlength="254" required${fieldErrorAttributes("email", form.error)} placeholder="colleague@example.com" value="${form.email ?? ""}"></div>
<button class="button primary" type="submit">Send invitation</button>
</form>
${fieldErrorNotice("email", form.error)}
</section>`,
  );
}

export function removeOwnerView(frame: Frame, email: string): Html {
  const path = ownersPath(frame);
  const self = email === frame.email;
  return appPage(
    "Remove owner",
    frame,
    html`${pageHeading(self ? "Leave this workspace?" : `Remove ${email}?`)}
<section class="panel narrow">
<ul class="consequences">
<li>${self ? "You" : email} can no longer open this workspace in the dashboard, from the next page on.</li>
<li>Nothing they did is undone; the audit log keeps it.</li>
<li>They can come back only if an owner invites them again.</li>
</ul>
<form method="post" action="${path}/remove" class="row">
${csrfField(frame.csrf)}
<input type="hidden" name="email" value="${email}">
<button class="button danger" type="submit">${self ? "Leave workspace" : "Remove owner"}</button>
<a class="button" href="${path}">Cancel</a>
</form>
</section>`,
  );
}

/** A signed-in owner's open invitations (the link in the invitation mail lands here). */
export function invitationsView(input: { csrf: string; email: string; invitations: (OwnerInvitation & { workspaceName: string })[] }): Html {
  const body =
    input.invitations.length === 0
      ? html`<h1>No open invitations</h1><p class="lede">There is no open invitation for ${input.email}: it may have been accepted when you signed in, withdrawn, or expired.</p><p><a class="button primary" href="${DASHBOARD}">Go to the dashboard</a></p>`
      : html`<h1>You are invited</h1><p class="lede">To co-own, as ${input.email}:</p>
<ul class="consequences">${input.invitations.map((i) => html`<li><strong>${i.workspaceName}</strong> <span class="muted">until ${time(i.expiresAt)}</span></li>`)}</ul>
<form method="post" action="${DASHBOARD}/invitations" class="row">${csrfField(input.csrf)}<button class="button primary" type="submit">Accept</button><a class="button" href="${DASHBOARD}">Not now</a></form>`;
  return cardPage("Invitations", body);
}
