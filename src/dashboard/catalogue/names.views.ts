// A name in other languages: a tool's, a bundle's, a plan's, a feature's or a meter's, one
// optional field per language the customer pages speak. The form itself stays in English
// (the dashboard's language); each field says its language in that language and is
// marked `lang` so that a screen reader reads what is typed in it rightly.
import { LANGUAGE_NAMES, LANGUAGES } from "../../i18n/locales.js";
import { nameParam, type SubjectNames } from "../../workspaces/translated-names.service.js";
import { type Html, html } from "../shared/html.js";
import { appPage, type Crumb, csrfField, type Frame, formError, notice, pageHeading } from "../shared/layout.js";

export interface NamesForm {
  /** What was typed, by field, shown again with a refusal. */
  typed: Record<string, string>;
  error: string;
  errorParam: string | undefined;
}

/** What a subject is called on the page: "tool", "plan"… and the trail to it. */
export interface NamesPlace {
  what: string;
  path: string;
  trail: Crumb[];
  back: { label: string; href: string };
}

export function namesView(frame: Frame, place: NamesPlace, names: SubjectNames, input: { saved?: boolean; form?: NamesForm } = {}): Html {
  const fieldIds = Object.fromEntries(LANGUAGES.map((l) => [nameParam(l), nameParam(l)]));
  const error = formError(input.form?.error, input.form?.errorParam, fieldIds);
  const title = `${names.defaultName} in other languages`;
  return appPage(
    title,
    frame,
    html`${pageHeading(
      title,
      `Your customer pages (sign in, plans, trial, manage) and Stripe Checkout show the ${place.what}'s name in the buyer's language when you give one here; in any other language, "${names.defaultName}" as you wrote it. Every field is optional; empty a field and save to remove its name.`,
    )}
${input.saved ? notice("success", "Saved. Your customer pages show these names from their next load.") : ""}
<section class="panel narrow">
<form method="post" action="${place.path}" class="stack">
${csrfField(frame.csrf)}
${error.notice}
${LANGUAGES.map((language) => {
  const field = nameParam(language);
  const value = input.form?.typed[field] ?? names.names[language] ?? "";
  return html`<div class="field"><label for="${field}">${LANGUAGE_NAMES[language]} <span class="muted">(${language})</span></label>
<input id="${field}" name="${field}" lang="${language}" maxlength="200" autocomplete="off" placeholder="${names.defaultName}" value="${value}"${error.on(field)}></div>`;
})}
<div class="row"><button class="button primary" type="submit">Save names</button><a class="button" href="${place.back.href}">${place.back.label}</a></div>
</form>
</section>`,
    { trail: [...place.trail, { label: "Names in other languages" }] },
  );
}
