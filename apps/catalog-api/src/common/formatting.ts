/** ISO-8601 in UTC with an explicit offset and whole seconds, e.g. 2024-03-05T09:12:44+00:00. */
export function formatTimestamp(value: Date | null): string | null {
  if (value === null) return null;
  return value.toISOString().replace(/\.\d{3}Z$/, '+00:00');
}

/** Free text as the export shows it: empty strings become null. */
export function textOrNull(value: string | null): string | null {
  return value === null || value === '' ? null : value;
}

/** Groups rows by a key, keeping their order (the queries sort them). */
export function groupBy<R, K>(rows: readonly R[], key: (row: R) => K): Map<K, R[]> {
  const groups = new Map<K, R[]>();
  for (const row of rows) {
    const k = key(row);
    const group = groups.get(k);
    if (group === undefined) groups.set(k, [row]);
    else group.push(row);
  }
  return groups;
}
