import type { Env } from "../../db/schema.js";
import type { BundleChange, EnvConsequence } from "../../workspaces/bundle.service.js";
import type { Bundle, Plan, Tool } from "../../workspaces/workspace.types.js";
import { type Html, html } from "../shared/html.js";
import {
  appPage,
  csrfField,
  currentSectionPath,
  emptyState,
  envBadge,
  type Frame,
  formatCount,
  formError,
  notice,
  pageHeading,
  scrollBox,
  time,
} from "../shared/layout.js";
import { type PlanForm, planAdded, plansPanels, productPath } from "./plans.views.js";
import { toolsPath } from "./tools.views.js";

export const bundlesPath = (frame: Frame) => currentSectionPath(frame, "bundles");

const bundlePath = (frame: Frame, id: string) => productPath(frame, { kind: "bundle", id });

/** One checkbox per tool, named `tool:<id>` (the form parser keeps one value per name). */
function toolChoices(tools: Tool[], checked: ReadonlySet<string>, legend: string): Html {
  return html`<fieldset class="choices">
<legend>${legend}</legend>
${tools.map(
  (t) =>
    html`<label class="choice"><input type="checkbox" name="tool:${t.id}" value="1"${checked.has(t.id) ? html` checked` : ""}> <span>${t.name} <code>${t.id}</code></span></label>`,
)}
</fieldset>`;
}

const toolNames = (tools: Tool[], ids: string[]) => {
  const names = new Map(tools.map((t) => [t.id, t.name]));
  return ids.map((id, i) => html`${i > 0 ? ", " : ""}${names.get(id) ?? id}`);
};

export interface BundleForm {
  id?: string;
  name?: string;
  tools?: ReadonlySet<string>;
  error?: string;
  errorParam?: string;
}

export function bundlesView(frame: Frame, input: { bundles: Bundle[]; tools: Tool[]; plans: Plan[]; form?: BundleForm }): Html {
  const { bundles, tools, plans } = input;
  const form = input.form ?? {};
  // The tools it gives are checkboxes, a group with no one field to mark: their refusal stays a notice.
  const error = formError(form.error, form.errorParam, { name: "bundle-name", id: "bundle-id" });
  const offered = (b: Bundle) => plans.filter((p) => p.productKind === "bundle" && p.productId === b.id && p.retiredAt === null).length;
  const table =
    bundles.length === 0
      ? emptyState("No bundles yet", "A bundle sells several tools together: whoever buys it holds every tool it names. Add one below.")
      : html`<div class="table-wrap"${scrollBox("Bundles")}><table>
<thead><tr><th>Bundle</th><th>ID</th><th>Tools</th><th class="num">Plans offered</th><th>Created</th><th><span class="sr-only">Open</span></th></tr></thead>
<tbody>${bundles.map(
          (b) => html`<tr>
<td><a href="${bundlePath(frame, b.id)}">${b.name}</a></td>
<td><code>${b.id}</code></td>
<td>${toolNames(tools, b.toolIds)}</td>
<td class="num">${offered(b) === 0 ? html`<span class="muted">None</span>` : offered(b)}</td>
<td>${time(b.createdAt)}</td>
<td class="actions"><a class="button small" href="${bundlePath(frame, b.id)}">Open</a></td>
</tr>`,
        )}</tbody>
</table></div>`;
  const add =
    tools.length === 0
      ? emptyState("Add tools first", html`A bundle names tools of this workspace. <a href="${toolsPath(frame)}">Add a tool</a>, then come back.`)
      : html`<form method="post" action="${bundlesPath(frame)}" class="stack">
${csrfField(frame.csrf)}
${error.notice}
<div class="grid-2">
<div class="field"><label for="bundle-name">Name</label>
<input id="bundle-name"${error.on("bundle-name")} name="name" maxlength="200" required placeholder="e.g. Productivity suite" value="${form.name ?? ""}"></div>
<div class="field"><label for="bundle-id">ID</label>
<input id="bundle-id"${error.on("bundle-id")} name="id" maxlength="64" required pattern="[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}" placeholder="e.g. suite" value="${form.id ?? ""}">
<p class="hint">What a Stripe checkout names as <code>warden_bundle</code>. It never changes.</p></div>
</div>
${toolChoices(tools, form.tools ?? new Set(), "Tools it gives")}
<div class="row"><button class="button primary" type="submit">Add bundle</button></div>
</form>`;
  return appPage(
    "Bundles",
    frame,
    html`${pageHeading("Bundles", "Several tools sold together. Bundles are the same in test and live.")}
<section class="panel">
<div class="panel-head"><h2>${bundles.length === 1 ? "1 bundle" : `${bundles.length} bundles`}</h2></div>
${table}
</section>
<section class="panel">
<div class="panel-head"><h2>Add a bundle</h2></div>
${add}
</section>`,
  );
}

export interface BundlePage {
  bundle: Bundle;
  tools: Tool[];
  plans: Plan[];
  created?: boolean;
  changed?: boolean;
  added?: string;
  toolsError?: { checked: ReadonlySet<string>; error: string };
  planForm?: PlanForm;
}

export function bundleView(frame: Frame, page: BundlePage): Html {
  const { bundle, tools } = page;
  const path = bundlePath(frame, bundle.id);
  return appPage(
    bundle.name,
    frame,
    html`${pageHeading(bundle.name, html`<code>${bundle.id}</code> · a bundle of ${toolNames(tools, bundle.toolIds)} · <a href="${bundlesPath(frame)}">All bundles</a> · <a href="${path}/names">Name in other languages</a>`)}
${page.created ? notice("success", "Bundle added. Give it a plan below to sell it.") : ""}
${page.changed ? notice("success", "The bundle's tools are changed. Its buyers' access changed with them.") : ""}
${page.added ? notice("success", planAdded(page.plans, page.added)) : ""}
<section class="panel">
<div class="panel-head"><h2>Tools it gives</h2></div>
<p class="panel-text">Whoever bought the bundle holds every tool it names, from the moment it names it. Before a change is made you see who gains or loses access.</p>
<form method="get" action="${path}/change" class="stack">
${page.toolsError ? notice("error", page.toolsError.error) : ""}
${toolChoices(tools, page.toolsError?.checked ?? new Set(bundle.toolIds), "Tools")}
<div class="row"><button class="button" type="submit">Review the change…</button></div>
</form>
</section>
${plansPanels(frame, { kind: "bundle", id: bundle.id, name: bundle.name }, page.plans, page.planForm ?? {})}`,
  );
}

const people = (n: number, complete: boolean) => `${complete ? "" : "at least "}${formatCount(n)} ${n === 1 ? "person" : "people"}`;

function envConsequence(c: EnvConsequence): Html {
  const lines = [
    ...c.gain.map((t) => html`<li class="gain"><strong>${people(t.people, c.complete)}</strong> gain ${t.toolName}</li>`),
    ...c.lose.map(
      (t) =>
        html`<li class="lose"><strong>${people(t.people, c.complete)}</strong> lose ${t.toolName}${t.people > 0 ? html` <span class="muted">(they hold it by no other purchase, grant or trial)</span>` : ""}</li>`,
    ),
  ];
  return html`<div class="consequence">
<h3>${envBadge(c.env)} ${c.env === "live" ? "Live customers" : "Test customers"}</h3>
<p class="muted">${c.buyers === 0 ? "Nobody has bought this bundle here yet: nobody's access changes." : `${c.complete ? "" : "More than "}${formatCount(c.complete ? c.buyers : c.buyers - 1)} ${c.buyers === 1 ? "buyer" : "buyers"}${c.complete ? "" : "; the first ones are counted"}.`}</p>
${c.buyers === 0 ? "" : html`<ul class="consequences">${lines}</ul>`}
</div>`;
}

export function bundleChangeView(frame: Frame, change: BundleChange, tools: Tool[]): Html {
  const path = bundlePath(frame, change.bundle.id);
  const order: Env[] = ["live", "test"];
  const consequences = order.map((env) => change.consequences.find((c) => c.env === env)).filter((c): c is EnvConsequence => c !== undefined);
  return appPage(
    "Change the bundle's tools",
    frame,
    html`${pageHeading(`Change the tools of ${change.bundle.name}?`, "Access changes at once for everyone who bought it, in test and in live.")}
<section class="panel narrow">
<dl class="facts">
<dt>Now</dt><dd>${toolNames(tools, change.before)}</dd>
<dt>After</dt><dd>${toolNames(tools, change.bundle.toolIds)}</dd>
${change.added.length > 0 ? html`<dt>Adds</dt><dd>${toolNames(tools, change.added)}</dd>` : ""}
${change.removed.length > 0 ? html`<dt>Removes</dt><dd>${toolNames(tools, change.removed)}</dd>` : ""}
</dl>
${consequences.map(envConsequence)}
<form method="post" action="${path}/change" class="row">
${csrfField(frame.csrf)}
${change.bundle.toolIds.map((id) => html`<input type="hidden" name="tool:${id}" value="1">`)}
<button class="button ${change.removed.length > 0 ? "danger" : "primary"}" type="submit">Change the tools</button>
<a class="button" href="${path}">Cancel</a>
</form>
</section>`,
    { trail: [{ label: change.bundle.name, href: path }, { label: "Change its tools" }] },
  );
}
