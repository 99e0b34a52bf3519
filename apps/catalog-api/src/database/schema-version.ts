import { catalogMigrations } from './migrations';

/** The migrations this release needs, by name, in order. */
export const REQUIRED_MIGRATIONS: readonly string[] = catalogMigrations.map(
  (migration) => new migration().name ?? migration.name,
);

/**
 * Why the schema cannot serve this release, or undefined when it can: every migration of the
 * release must have run. Migrations it does not know are a newer release's, written so that the
 * release before keeps working (docs/operations.md, "Schema changes"): it serves on.
 */
export function schemaProblem(
  applied: readonly string[],
  required: readonly string[] = REQUIRED_MIGRATIONS,
): string | undefined {
  const done = new Set(applied);
  const missing = required.filter((name) => !done.has(name));
  if (missing.length === 0) return undefined;
  const names = missing.length > 3 ? [...missing.slice(0, 3), '…'] : missing;
  return `schema too old: ${missing.length} of this release's ${required.length} migrations not applied (${names.join(', ')}); the release's migration Job applies them`;
}
