import type { OwnerSessionListItem } from "../../owners/owner-sessions.service.js";
import { type Html, html } from "../shared/html.js";
import { accountQuery, appPage, csrfField, DASHBOARD, emptyState, type Frame, notice, pageHeading, scrollBox, time } from "../shared/layout.js";

export const SESSIONS_PATH = `${DASHBOARD}/sessions`;

// Enough to tell "my laptop" from "not mine": the browser's family and system, read from
// its User-Agent (its own to write, so shown as a hint, never trusted for a decision).
const BROWSERS: [RegExp, string][] = [
  [/Edg\//, "Edge"],
  [/OPR\//, "Opera"],
  [/Firefox\//, "Firefox"],
  [/Chrom(e|ium)\//, "Chrome"],
  [/Safari\//, "Safari"],
  [/^curl\//, "curl"],
];
const SYSTEMS: [RegExp, string][] = [
  [/Windows/, "Windows"],
  [/iPhone|iPad/, "iOS"],
  [/Android/, "Android"],
  [/Mac OS X|Macintosh/, "macOS"],
  [/CrOS/, "ChromeOS"],
  [/Linux/, "Linux"],
];

export function describeBrowser(userAgent: string | null): string {
  if (userAgent === null || userAgent.trim() === "") return "Unknown browser";
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1] ?? "Another browser";
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  return system ? `${browser} on ${system}` : browser;
}

function sessionRow(frame: Frame, s: OwnerSessionListItem): Html {
  return html`<tr${s.current ? html` class="is-current"` : ""}>
<td><strong>${describeBrowser(s.userAgent)}</strong>${s.current ? html` <span class="badge badge-ok">This browser</span>` : ""}${
    s.userAgent ? html`<br><span class="muted ua" title="${s.userAgent}">${s.userAgent.length > 60 ? `${s.userAgent.slice(0, 60)}…` : s.userAgent}</span>` : ""
  }</td>
<td>${s.address ?? html`<span class="muted">Unknown</span>`}</td>
<td>${time(s.createdAt)}</td>
<td>${time(s.lastSeenAt)}</td>
<td class="actions">${
    s.current
      ? html`<span class="muted">Sign out to end it</span>`
      : html`<form method="post" action="${SESSIONS_PATH}/${s.id}/end${accountQuery(frame.current)}">${csrfField(frame.csrf)}<button class="button small danger-outline" type="submit">End session</button></form>`
  }</td>
</tr>`;
}

export function sessionsView(frame: Frame, sessions: OwnerSessionListItem[], flash: { ended?: number } = {}): Html {
  const others = sessions.filter((s) => !s.current).length;
  const table = html`<div class="table-wrap"${scrollBox("Sessions")}><table>
<thead><tr><th>Browser</th><th>Address</th><th>Signed in</th><th>Last seen</th><th><span class="sr-only">Actions</span></th></tr></thead>
<tbody>${sessions.map((s) => sessionRow(frame, s))}</tbody>
</table></div>`;
  return appPage(
    "Sessions",
    frame,
    html`${pageHeading("Sessions", html`Where you are signed in as <strong>${frame.email}</strong>. If you see one that is not yours, end it, then tell your operator.`)}
${flash.ended !== undefined ? notice("success", flash.ended === 1 ? "1 session ended. That browser must sign in again." : `${flash.ended} sessions ended. Those browsers must sign in again.`) : ""}
<section class="panel">
${sessions.length === 0 ? emptyState("No open sessions", "") : table}
</section>
<section class="panel narrow">
<h2>Everywhere else</h2>
${
  others === 0
    ? html`<p>This is your only session.</p>`
    : html`<p>${others === 1 ? "End the 1 other session" : `End all ${others} other sessions`}; this one stays signed in.</p>
<form method="post" action="${SESSIONS_PATH}/end-others${accountQuery(frame.current)}" class="row">${csrfField(frame.csrf)}<button class="button danger" type="submit">End all other sessions</button></form>`
}
</section>`,
  );
}
