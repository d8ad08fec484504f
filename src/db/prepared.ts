import type { Compilable, CompiledQuery, InferResult, RawBuilder } from "kysely";
import { directSqlite, type Executor } from "./database.js";
import { nameStatement } from "./statement-names.js";

// Kysely builds and compiles a query's syntax tree on every call: on the hot paths that
// was a third of a request's CPU. A prepared query is built and compiled once per
// dialect with placeholder values, then run with the caller's values in their slots.
// Only for queries whose shape does not depend on their arguments.

const MARK = "\u0000warden-slot:";

type Slot = { arg: number } | { value: unknown };

/** `p<T>(i)`: the i-th argument, typed for the builder. */
export type Placeholder = <T>(index: number) => T;

const placeholder: Placeholder = <T>(index: number) => `${MARK}${index}` as unknown as T;

interface Template {
  compiled: CompiledQuery;
  slots: Slot[];
}

export function prepared<Q extends Compilable<unknown>>(build: (ex: Executor, p: Placeholder) => Q) {
  return preparedCompiled<InferResult<Q>>((ex) => build(ex, placeholder).compile());
}

/** One prepared query per number of rows (`make(rows)`), made the first time that number is asked: for multi-row statements whose only varying shape is their row count. */
export function perRowCount<F>(make: (rows: number) => F): (rows: number) => F {
  const made = new Map<number, F>();
  return (rows) => {
    let f = made.get(rows);
    if (!f) {
      f = make(rows);
      made.set(rows, f);
    }
    return f;
  };
}

/** `prepared` for SQL written out with Kysely's `sql` tag (statements the builder cannot express); builders of `ex` may be embedded. */
export function preparedRaw<R>(build: (p: Placeholder, ex: Executor) => RawBuilder<R>) {
  return preparedCompiled<R[]>((ex) => build(placeholder, ex).compile(ex));
}

function preparedCompiled<Rows>(compile: (ex: Executor) => CompiledQuery) {
  // One template per dialect: the adapter is shared by a database and its transactions.
  const templates = new WeakMap<object, Template>();
  return async (ex: Executor, args: readonly unknown[]): Promise<Rows> => {
    const adapter = ex.getExecutor().adapter;
    let template = templates.get(adapter);
    if (!template) {
      const compiled = compile(ex);
      const slots = compiled.parameters.map(
        (value): Slot => (typeof value === "string" && value.startsWith(MARK) ? { arg: Number(value.slice(MARK.length)) } : { value }),
      );
      template = { compiled, slots };
      nameStatement(compiled.sql);
      templates.set(adapter, template);
    }
    const parameters = template.slots.map((slot) => ("arg" in slot ? args[slot.arg] : slot.value));
    const rows = directSqlite(ex)?.(template.compiled.sql, parameters);
    if (rows) return rows as Rows;
    const result = await ex.executeQuery({ ...template.compiled, parameters });
    return result.rows as Rows;
  };
}
