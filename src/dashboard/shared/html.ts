// Templates are tagged template literals that escape every interpolated value; markup
// made by another template passes through unchanged, and trusted markup that is not a
// template's must be wrapped in raw() by name, so that each exception is easy to find.

/** Markup that is already safe: made by `html` or named `raw`. */
export class Html {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const UNSAFE = /[&<>"']/;
const UNSAFE_ALL = /[&<>"']/g;

/** Text made safe for element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  // Most text has nothing to escape: a test is much cheaper than a replace that calls back.
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, (c) => ESCAPES[c] ?? c) : text;
}

type Value = Html | string | number | null | undefined | false | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof Html) return value.markup;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i] as Value) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** Markup inserted as it is. Only for text that is ours, never for anything a person typed. */
export function raw(trusted: string): Html {
  return new Html(trusted);
}
