// The names prepared queries run under as named statements on PostgreSQL (parsed and
// planned once per connection). Registered by prepared.ts when a query is first compiled,
// read by database.ts's pool when it sends SQL; a module of its own so neither imports the
// other.

// SQL texts of prepared queries, with the statement name each runs under on PostgreSQL.
const statementNames = new Map<string, string>();

/** Gives a prepared query's SQL its statement name, once. */
export function nameStatement(sql: string): void {
  if (!statementNames.has(sql)) statementNames.set(sql, `warden_${statementNames.size + 1}`);
}

/** The name a prepared query's SQL runs under as a named statement, or undefined for any other SQL. */
export function preparedStatementName(sql: string): string | undefined {
  return statementNames.get(sql);
}
