import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { StorageSystem } from '../storage/storage-system';

/** Separates the import id from the rest of a staging name; never part of an import id. */
const SEPARATOR = '~';

/** The worker's host (the pod name in Kubernetes), reduced to characters safe in a path segment. */
const WORKER =
  hostname()
    .replace(/[^A-Za-z0-9-]/g, '')
    .slice(0, 40) || 'worker';

export type StagingPart = 'data' | 'collection';

/**
 * A staging name unique to one attempt: `<import id>~<part>~a<attempt>-<worker>-<random>`.
 * Because no two attempts ever share a staging area, a replica cleaning up at start-up can only
 * ever remove areas it saw before checking their import was not running, never one an attempt
 * created after that check; and a stalled attempt that wakes up never writes into its
 * successor's area.
 */
export function attemptStagingId(importId: string, part: StagingPart, attempt: number): string {
  const token = `a${attempt}-${WORKER}-${randomBytes(4).toString('hex')}`;
  return [importId, part, token].join(SEPARATOR);
}

/** The import a staging area belongs to (names from before per-attempt names included). */
export function importIdOfStaging(name: string): string {
  return name.split(SEPARATOR)[0];
}

/**
 * Removes every staging area of one import. Only for the attempt that holds the import's job
 * lock: any other area of the same import belongs to an attempt that is dead (or stalled, and
 * then refused at publish time because its area is gone).
 */
export async function removeStagingOfImport(
  storage: StorageSystem,
  importId: string,
): Promise<void> {
  for (const name of await storage.listStaging())
    if (importIdOfStaging(name) === importId) await storage.removeStaging(name);
}

/** The attempt number of a data staging area's name; null for any other name. */
function dataAttemptOf(name: string): number | null {
  const [, part, token] = name.split(SEPARATOR);
  const match = part === 'data' ? /^a(\d+)-/.exec(token ?? '') : null;
  return match ? Number(match[1]) : null;
}

/**
 * The data staging areas earlier attempts of one import left, newest attempt first, for this
 * attempt to adopt (StorageSystem.openStaging); the import's other areas (a collection's, names
 * of another form) are removed. Only for the attempt that holds the import's job lock.
 */
export async function earlierDataAreas(
  storage: StorageSystem,
  importId: string,
): Promise<string[]> {
  const areas: { name: string; attempt: number }[] = [];
  for (const name of await storage.listStaging()) {
    if (importIdOfStaging(name) !== importId) continue;
    const attempt = dataAttemptOf(name);
    if (attempt === null) await storage.removeStaging(name);
    else areas.push({ name, attempt });
  }
  return areas.sort((a, b) => b.attempt - a.attempt).map((area) => area.name);
}
