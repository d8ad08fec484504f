// What a tool sells besides itself, on the Configure pages: the features and meters a
// tool declares (on the tool's page), and a plan's terms for each tool it covers (on the
// plan's page). The same use cases as `warden admin feature|meter|plan terms`.
import type { Feature, Meter, PlanTerms } from "../../usage/usage.types.js";
import type { Plan } from "../../workspaces/workspace.types.js";
import { type Html, html } from "../shared/html.js";
import { csrfField, emptyState, type Frame, formError, notice, scrollBox } from "../shared/layout.js";
import { type Product, planPath, productPath } from "./plans.views.js";

/** What was typed into one of the tool page's two add forms, with the refusal to show. */
export interface DeclareForm {
  kind: "feature" | "meter";
  values: Record<string, string>;
  error: string;
  errorParam: string | undefined;
}

const count = (n: number, one: string, many: string) => (n === 1 ? `1 ${one}` : `${n} ${many}`);

export function usagePanel(frame: Frame, toolId: string, declared: { features: Feature[]; meters: Meter[] }, form?: DeclareForm, added?: string): Html {
  const path = productPath(frame, { kind: "tool", id: toolId });
  const typed = (kind: DeclareForm["kind"], name: string, fallback = "") => (form?.kind === kind ? (form.values[name] ?? fallback) : fallback);
  const featureError = formError(form?.kind === "feature" ? form.error : undefined, form?.errorParam, { id: "feature-id", name: "feature-name" });
  const meterError = formError(form?.kind === "meter" ? form.error : undefined, form?.errorParam, {
    id: "meter-id",
    name: "meter-name",
    unit: "meter-unit",
    free: "meter-free",
  });
  const features =
    declared.features.length === 0
      ? emptyState("No features", "A feature is something a plan unlocks, such as export or sync. Your extension asks whether a person has it.")
      : html`<ul class="event-list">${declared.features.map(
          (f) =>
            html`<li><code>${f.id}</code> ${f.name} <a href="${path}/features/${encodeURIComponent(f.id)}/names" aria-label="${f.name} in other languages">Other languages</a></li>`,
        )}</ul>`;
  const meters =
    declared.meters.length === 0
      ? emptyState("No meters", "A meter counts what a person uses, such as summaries; each plan gives an allowance of it per period.")
      : html`<div class="table-wrap"${scrollBox("Meters")}><table>
<thead><tr><th>Meter</th><th>ID</th><th>Unit</th><th class="num">Free a month</th></tr></thead>
<tbody>${declared.meters.map(
          (m) =>
            html`<tr><td>${m.name} <a href="${path}/meters/${encodeURIComponent(m.id)}/names" aria-label="${m.name} in other languages">Other languages</a></td><td><code>${m.id}</code></td><td>${m.unit}</td><td class="num">${m.freeAllowance === null ? html`<span class="muted">None</span>` : m.freeAllowance.toLocaleString("en")}</td></tr>`,
        )}</tbody>
</table></div>`;
  return html`<section class="panel" id="usage">
<div class="panel-head"><h2>Features and meters</h2></div>
<p class="panel-text">Each plan's page says which features it unlocks and how much of each meter it gives per period. A trial, or a grant that names no plan, gives every feature and the largest allowance of your plans.</p>
${added ? notice("success", html`Added <code>${added}</code>. Open a plan below to give it.`) : ""}
<h3>${count(declared.features.length, "feature", "features")}</h3>
${features}
<form method="post" action="${path}/features" class="stack">
${csrfField(frame.csrf)}
${featureError.notice}
<div class="grid-3">
<div class="field"><label for="feature-name">Feature name</label>
<input id="feature-name"${featureError.on("feature-name")} name="name" maxlength="100" required placeholder="e.g. Export" value="${typed("feature", "name")}"></div>
<div class="field"><label for="feature-id">ID</label>
<input id="feature-id"${featureError.on("feature-id")} name="id" maxlength="64" required pattern="[a-z0-9][a-z0-9_\\-]{0,63}" placeholder="e.g. export" value="${typed("feature", "id")}">
<p class="hint">Lower-case letters, digits, <code>_</code> <code>-</code>; it never changes.</p></div>
</div>
<div class="row"><button class="button" type="submit">Add feature</button></div>
</form>
<h3>${count(declared.meters.length, "meter", "meters")}</h3>
${meters}
<form method="post" action="${path}/meters" class="stack">
${csrfField(frame.csrf)}
${meterError.notice}
<div class="grid-3">
<div class="field"><label for="meter-name">Meter name</label>
<input id="meter-name"${meterError.on("meter-name")} name="name" maxlength="100" required placeholder="e.g. Summaries" value="${typed("meter", "name")}"></div>
<div class="field"><label for="meter-id">ID</label>
<input id="meter-id"${meterError.on("meter-id")} name="id" maxlength="64" required pattern="[a-z0-9][a-z0-9_\\-]{0,63}" placeholder="e.g. summaries" value="${typed("meter", "id")}"></div>
<div class="field"><label for="meter-unit">Unit</label>
<input id="meter-unit"${meterError.on("meter-unit")} name="unit" maxlength="40" required placeholder="e.g. summaries" value="${typed("meter", "unit")}"></div>
<div class="field"><label for="meter-free">Free a month</label>
<input id="meter-free"${meterError.on("meter-free")} name="free" inputmode="numeric" pattern="[0-9]{0,13}" value="${typed("meter", "free")}">
<p class="hint">For people who hold nothing. Empty offers none.</p></div>
</div>
<div class="row"><button class="button" type="submit">Add meter</button></div>
</form>
</section>`;
}

/** One tool's part of a plan's terms: what it declares and what the plan gives of it. */
export interface ToolTermsPart {
  tool: { id: string; name: string };
  features: Feature[];
  meters: Meter[];
  terms: PlanTerms;
}

export interface TermsInput {
  saved?: boolean;
  /** The tool whose form was refused, with the message. */
  refused?: { tool: string; error: string; errorParam: string | undefined };
}

export function termsPanels(frame: Frame, product: Product, plan: Plan, parts: ToolTermsPart[], input: TermsInput = {}): Html {
  const action = `${planPath(frame, product, plan.id)}/terms`;
  const oneTime = plan.billing === "one_time";
  const panel = (part: ToolTermsPart) => {
    const refused = input.refused?.tool === part.tool.id ? input.refused : undefined;
    const error = formError(refused?.error, refused?.errorParam, {
      features: `features-${part.tool.id}`,
      allowances: `allowances-${part.tool.id}`,
      credits: `credits-${part.tool.id}`,
      "credits-expire-days": `expire-${part.tool.id}`,
    });
    const nothing = part.features.length === 0 && part.meters.length === 0;
    const heading = product.kind === "tool" ? "What this plan gives" : html`What this plan gives in ${part.tool.name}`;
    if (nothing) {
      return html`<section class="panel narrow" id="terms-${part.tool.id}">
<div class="panel-head"><h2>${heading}</h2></div>
<p class="panel-text muted">${part.tool.name} declares no features or meters yet: add them on <a href="${productPath(frame, { kind: "tool", id: part.tool.id })}#usage">its page</a>.</p>
</section>`;
    }
    return html`<section class="panel narrow" id="terms-${part.tool.id}">
<div class="panel-head"><h2>${heading}</h2></div>
${input.saved && !refused ? notice("success", "Saved. Every access answer says it from now on.") : ""}
<form method="post" action="${action}" class="stack">
${csrfField(frame.csrf)}
<input type="hidden" name="tool" value="${part.tool.id}">
${error.notice}
${
  part.features.length === 0 || !plan.givesAccess
    ? ""
    : html`<fieldset class="choices" id="features-${part.tool.id}"><legend>Features it unlocks</legend>
${part.features.map(
  (f) =>
    html`<label class="choice"><input type="checkbox" name="feature_${f.id}" value="1"${part.terms.features.includes(f.id) ? html` checked` : ""}> <span>${f.name} <code>${f.id}</code></span></label>`,
)}
</fieldset>`
}
${part.meters.map(
  (m) => html`<div class="grid-3">
${
  plan.givesAccess
    ? html`<div class="field"><label for="allowance-${part.tool.id}-${m.id}">${m.name}: ${plan.billing === "subscription" ? "each billing period" : "each month"}</label>
<input id="allowance-${part.tool.id}-${m.id}"${error.on(`allowances-${part.tool.id}`)} name="allowance_${m.id}" inputmode="numeric" pattern="[0-9]{0,13}" value="${String(part.terms.allowances[m.id] ?? "")}">
<p class="hint">${m.unit}; empty or 0 gives none.</p></div>`
    : ""
}
${
  oneTime
    ? html`<div class="field"><label for="credits-${part.tool.id}-${m.id}">${m.name}: credits each purchase</label>
<input id="credits-${part.tool.id}-${m.id}"${error.on(`credits-${part.tool.id}`)} name="credits_${m.id}" inputmode="numeric" pattern="[0-9]{0,13}" value="${String(part.terms.credits[m.id] ?? "")}">
<p class="hint">A credit pack: spent after the allowance.</p></div>`
    : ""
}
</div>`,
)}
${
  oneTime && part.meters.length > 0
    ? html`<div class="field"><label for="expire-${part.tool.id}">Credits last (days)</label>
<input id="expire-${part.tool.id}"${error.on(`expire-${part.tool.id}`)} name="credits_expire_days" inputmode="numeric" pattern="[0-9]{0,4}" value="${part.terms.creditsExpireDays === null ? "" : String(part.terms.creditsExpireDays)}">
<p class="hint">Empty: until spent.</p></div>`
    : ""
}
<div class="row"><button class="button primary" type="submit">Save what it gives</button></div>
</form>
</section>`;
  };
  return html`${parts.map(panel)}`;
}
