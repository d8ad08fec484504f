// The Stripe page's reconcile panel: the button (a dry run first, or for real), the
// environment's recent runs, and what the one on view found: the changes made (or that
// would be), and the purchases that map to no plan with who bought them and what.
import type { ReconcileResult } from "../../stripe/stripe-reconcile.service.js";
import { type Html, html } from "../shared/html.js";
import { csrfField, emptyState, type Frame, formatCount, notice, sectionPath, time } from "../shared/layout.js";
import { failureNotice, reconcileErrorWords } from "./stripe-error-words.js";

const STATUS: Record<ReconcileResult["status"], Html> = {
  running: html`<span class="badge badge-pending">Running</span>`,
  done: html`<span class="badge badge-ok">Done</span>`,
  failed: html`<span class="badge badge-failing">Failed</span>`,
};

const kindOf = (run: ReconcileResult) => (run.dryRun ? "Dry run" : run.since === null ? "Everything" : "Since");

function runDetail(frame: Frame, run: ReconcileResult): Html {
  const here = frame.current;
  const tools = here ? sectionPath(here.workspace.slug, here.env, "tools") : "";
  const would = run.dryRun ? "Would change" : "Changed";
  const summary =
    run.status === "running"
      ? notice("info", html`Reading Stripe: ${formatCount(run.scanned)} objects so far. <a href="?run=${run.id}">Refresh</a> to see how far it has got.`)
      : run.status === "failed"
        ? failureNotice(reconcileErrorWords(run.error ?? "no error was recorded"), {
            lead: html`<strong>It stopped.</strong>`,
            after: "What it had applied stays; running it again picks up the rest.",
            source: "What was recorded",
          })
        : notice(
            run.applied === 0 && run.unmapped === 0 ? "success" : "info",
            `Read ${formatCount(run.scanned)} Stripe objects. ${would}: ${formatCount(run.applied)}. Mapped to no plan: ${formatCount(run.unmapped)}.${run.dryRun ? " Nothing was changed." : ""}`,
          );
  const changes =
    run.report.changes.length === 0
      ? ""
      : html`<h3>${would}</h3><div class="table-wrap"><table>
<thead><tr><th>Stripe object</th><th>Events sent</th></tr></thead>
<tbody>${run.report.changes.map(
          (c) =>
            html`<tr><td>${c.kind} <code>${c.object}</code></td><td>${c.events.map((e, i) => html`${i > 0 ? ", " : ""}<code>${e.type}</code>`)}${c.note ? html` <span class="state-note">${c.note}</span>` : ""}</td></tr>`,
        )}</tbody></table></div>`;
  const unmapped =
    run.report.unmapped.length === 0
      ? ""
      : html`<h3>Mapped to no plan</h3>
<p class="panel-text">Link each price to its plan on the plan's page (<a href="${tools}">Tools</a> › the tool › the plan), then reconcile again. Nothing is guessed.</p>
<div class="table-wrap"><table>
<thead><tr><th>Purchase</th><th>Buyer</th><th>Bought</th><th>Why</th></tr></thead>
<tbody>${run.report.unmapped.map(
          (u) => html`<tr><td>${u.kind} <code>${u.object}</code></td><td>${u.email ?? html`<span class="muted">unknown</span>`}</td>
<td>${u.items.map((i, n) => html`${n > 0 ? ", " : ""}<code>${i.price ?? "?"}</code>`)}</td><td>${u.reason}</td></tr>`,
        )}</tbody></table></div>`;
  const skipped =
    run.report.skipped.length === 0
      ? ""
      : html`<h3>Skipped</h3><ul>${run.report.skipped.map((s) => html`<li>${s.kind} <code>${s.object}</code>: ${s.reason}</li>`)}</ul>`;
  return html`${summary}${changes}${unmapped}${skipped}`;
}

export function reconcilePanel(frame: Frame, input: { canRead: boolean; runs: ReconcileResult[]; shown: ReconcileResult | null; error?: string }): Html {
  const here = frame.current;
  const action = here ? `${sectionPath(here.workspace.slug, here.env, "stripe")}/reconcile` : "";
  const intro = html`<p class="panel-text">Reads your Stripe account's checkouts, subscriptions, paid invoices, refunds and disputes, and applies what Warden lacks: purchases made while this address was unreachable or before it was connected, and ones made without Warden (ExtensionPay, a payment link) once their price is linked to a plan. Each fact is applied once, with the event your webhooks would have had.</p>`;
  const form = input.canRead
    ? html`<form method="post" action="${action}" class="row">
${csrfField(frame.csrf)}
<button class="button" type="submit" name="dry_run" value="1">Check without changing</button>
<button class="button primary" type="submit" name="dry_run" value="0">Reconcile now</button>
</form>`
    : html`<p class="panel-text muted">Reconciling reads Stripe's API with a secret key: add one below.</p>`;
  const list =
    input.runs.length === 0
      ? emptyState("No reconcile yet", "Run a check first: it says what would change and changes nothing.")
      : html`<div class="table-wrap"><table>
<thead><tr><th>Started</th><th>Kind</th><th>Status</th><th>Read</th><th>Applied</th><th>No plan</th></tr></thead>
<tbody>${input.runs.map(
          (r) => html`<tr><td><a href="?run=${r.id}">${time(r.startedAt)}</a></td><td>${kindOf(r)}</td><td>${STATUS[r.status]}</td>
<td>${formatCount(r.scanned)}</td><td>${formatCount(r.applied)}</td><td>${formatCount(r.unmapped)}</td></tr>`,
        )}</tbody></table></div>`;
  return html`<section class="panel" id="reconcile">
<div class="panel-head"><h2>Reconcile with Stripe</h2></div>
${intro}
${input.error ? notice("error", input.error) : ""}
${form}
${input.shown ? runDetail(frame, input.shown) : ""}
<h3>Recent runs</h3>
${list}
</section>`;
}
