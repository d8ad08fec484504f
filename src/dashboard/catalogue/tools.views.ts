import type { Plan, Tool } from "../../workspaces/workspace.types.js";
import { type Html, html } from "../shared/html.js";
import { appPage, csrfField, currentSectionPath, emptyState, type Frame, formError, notice, pageHeading, scrollBox, time } from "../shared/layout.js";
import { type PlanForm, planAdded, plansPanels, productPath } from "./plans.views.js";

export const toolsPath = (frame: Frame) => currentSectionPath(frame, "tools");

export const trialText = (days: number) => (days === 0 ? "No trial" : days === 1 ? "1-day trial" : `${days}-day trial`);

export interface ToolForm {
  id?: string;
  name?: string;
  trialDays?: string;
  error?: string;
  errorParam?: string;
}

const SHARED_NOTE = "Tools, bundles and plans are the same in test and live: what you add here is sold in both.";

function addToolForm(frame: Frame, form: ToolForm): Html {
  const error = formError(form.error, form.errorParam, { name: "tool-name", id: "tool-id", "trial-days": "tool-trial" });
  return html`<form method="post" action="${toolsPath(frame)}" class="stack">
${csrfField(frame.csrf)}
${error.notice}
<div class="grid-3">
<div class="field"><label for="tool-name">Name</label>
<input id="tool-name"${error.on("tool-name")} name="name" maxlength="200" required placeholder="e.g. Tab Master" value="${form.name ?? ""}"></div>
<div class="field"><label for="tool-id">ID</label>
<input id="tool-id"${error.on("tool-id")} name="id" maxlength="64" required pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}" placeholder="e.g. tabmaster" value="${form.id ?? ""}">
<p class="hint">Its address in the API: <code>/api/v1/tools/&lt;id&gt;/…</code>. Letters, digits, <code>_</code> <code>-</code> <code>.</code>; it never changes.</p></div>
<div class="field"><label for="tool-trial">Trial days</label>
<input id="tool-trial"${error.on("tool-trial")} name="trial_days" inputmode="numeric" pattern="[0-9]{1,3}" value="${form.trialDays ?? "0"}">
<p class="hint">0 offers no trial; at most 365.</p></div>
</div>
<div class="row"><button class="button primary" type="submit">Add tool</button></div>
</form>`;
}

export function toolsView(frame: Frame, tools: Tool[], plans: Plan[], form: ToolForm = {}): Html {
  const offered = (tool: Tool) => plans.filter((p) => p.productKind === "tool" && p.productId === tool.id && p.retiredAt === null).length;
  const table =
    tools.length === 0
      ? emptyState(
          "No tools yet",
          "A tool is what your customers get access to: an extension, an app, a feature. Add your first one below, then give it a plan to sell it.",
        )
      : html`<div class="table-wrap"${scrollBox("Tools")}><table>
<thead><tr><th>Tool</th><th>ID</th><th>Trial</th><th class="num">Plans offered</th><th>Created</th><th><span class="sr-only">Open</span></th></tr></thead>
<tbody>${tools.map(
          (t) => html`<tr>
<td><a href="${productPath(frame, { kind: "tool", id: t.id })}">${t.name}</a></td>
<td><code>${t.id}</code></td>
<td>${t.trialDays === 0 ? html`<span class="muted">No trial</span>` : trialText(t.trialDays)}</td>
<td class="num">${offered(t) === 0 ? html`<span class="muted">None</span>` : offered(t)}</td>
<td>${time(t.createdAt)}</td>
<td class="actions"><a class="button small" href="${productPath(frame, { kind: "tool", id: t.id })}">Open</a></td>
</tr>`,
        )}</tbody>
</table></div>`;
  return appPage(
    "Tools and plans",
    frame,
    html`${pageHeading("Tools and plans", SHARED_NOTE)}
<section class="panel">
<div class="panel-head"><h2>${tools.length === 1 ? "1 tool" : `${tools.length} tools`}</h2></div>
${table}
</section>
<section class="panel">
<div class="panel-head"><h2>Add a tool</h2></div>
${addToolForm(frame, form)}
</section>`,
  );
}

export interface ToolPage {
  tool: Tool;
  plans: Plan[];
  /** The features and meters it declares, with their add forms. */
  usage: Html;
  saved?: boolean;
  added?: string;
  details?: { name: string; trialDays: string; error: string; errorParam: string | undefined };
  planForm?: PlanForm;
}

export function toolView(frame: Frame, page: ToolPage): Html {
  const { tool } = page;
  const path = productPath(frame, { kind: "tool", id: tool.id });
  const error = formError(page.details?.error, page.details?.errorParam, { name: "name", "trial-days": "trial_days" });
  return appPage(
    tool.name,
    frame,
    html`${pageHeading(tool.name, html`<code>${tool.id}</code> · ${trialText(tool.trialDays)} · <a href="${toolsPath(frame)}">All tools</a>`)}
${page.saved ? notice("success", "Saved. A trial already started keeps the end it was given.") : ""}
${page.added ? notice("success", html`${planAdded(page.plans, page.added)} Your buy button can offer it now.`) : ""}
<section class="panel">
<div class="panel-head"><h2>Details</h2></div>
<form method="post" action="${path}" class="stack">
${csrfField(frame.csrf)}
${error.notice}
<div class="grid-3">
<div class="field"><label for="name">Name</label>
<input id="name"${error.on("name")} name="name" maxlength="200" required value="${page.details?.name ?? tool.name}"></div>
<div class="field"><label for="id-shown">ID</label>
<input id="id-shown" value="${tool.id}" readonly disabled>
<p class="hint">Fixed: your extension and server use it.</p></div>
<div class="field"><label for="trial_days">Trial days</label>
<input id="trial_days"${error.on("trial_days")} name="trial_days" inputmode="numeric" pattern="[0-9]{1,3}" required value="${page.details?.trialDays ?? String(tool.trialDays)}">
<p class="hint">A signed-in person may start one trial. 0 offers none; at most 365.</p></div>
</div>
<div class="row"><button class="button primary" type="submit">Save changes</button><a class="button" href="${path}/names">Name in other languages</a></div>
</form>
</section>
${plansPanels(frame, { kind: "tool", id: tool.id, name: tool.name }, page.plans, page.planForm ?? {})}
${page.usage}`,
  );
}
