import type { EntityManager } from 'typeorm';

/** Metadata key of @CachedRead(). */
export const CACHED_READ = 'catalog:cached-read';

export interface CachedReadOptions {
  /**
   * The answer depends on today's date (UTC), which no write changes: the date is part of the
   * key and an entry is not served past the end of its day.
   */
  untilEndOfUtcDay?: boolean;
  /**
   * The handler runs exactly one SQL statement. One statement sees one snapshot, at least as
   * new as the version read before it, so it needs no transaction (three round trips fewer).
   */
  singleStatement?: boolean;
}

/** Where the interceptor leaves the snapshot's EntityManager for the handler. */
const SNAPSHOT = Symbol('read snapshot');
type WithSnapshot = { [SNAPSHOT]?: EntityManager };

export function attachSnapshot(req: object, manager: EntityManager): void {
  (req as WithSnapshot)[SNAPSHOT] = manager;
}

export function snapshotOf(req: object): EntityManager | undefined {
  return (req as WithSnapshot)[SNAPSHOT];
}
