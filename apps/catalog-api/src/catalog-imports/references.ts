import type { EntityManager } from 'typeorm';
import type { TrackedRecordsRepository, TrackedTable } from '../common/tracked-records.repository';
import type { UsersRepository } from '../users/users.repository';
import { fold } from './import-context';

/** The repositories references are looked up in. */
export interface ReferenceLookups {
  tracked: TrackedRecordsRepository;
  users: UsersRepository;
}

/**
 * Batched reference lookups: one query per kind for a whole document, never one per item.
 * A reference is an accession or a name (partners also by a unique acronym, projects by
 * acronym); the maps are keyed by the folded reference.
 */
export class References {
  private constructor(
    private readonly partners: Map<string, number>,
    private readonly partnerIds: Set<number>,
    private readonly cohorts: Map<string, number>,
    private readonly projects: Map<string, number>,
    private readonly projectIds: Set<number>,
    private readonly users: Map<string, number>,
  ) {}

  static async load(
    manager: EntityManager,
    lookups: ReferenceLookups,
    wanted: {
      partners?: string[];
      partnerIds?: number[];
      cohorts?: string[];
      projects?: string[];
      projectIds?: number[];
      userEmails?: string[];
    },
  ): Promise<References> {
    const { tracked, users } = lookups;
    return new References(
      await lookup(manager, tracked, 'partners', ['name', 'acronym'], wanted.partners ?? []),
      await existingIds(manager, tracked, 'partners', wanted.partnerIds ?? []),
      await lookup(manager, tracked, 'cohorts', ['name'], wanted.cohorts ?? []),
      await lookup(manager, tracked, 'projects', ['acronym', 'title'], wanted.projects ?? []),
      await existingIds(manager, tracked, 'projects', wanted.projectIds ?? []),
      await usersByEmail(manager, users, wanted.userEmails ?? []),
    );
  }

  partner(ref: string): number | undefined {
    return this.partners.get(fold(ref));
  }

  hasPartnerId(id: number): boolean {
    return this.partnerIds.has(id);
  }

  cohort(ref: string): number | undefined {
    return this.cohorts.get(fold(ref));
  }

  project(ref: string): number | undefined {
    return this.projects.get(fold(ref));
  }

  hasProjectId(id: number): boolean {
    return this.projectIds.has(id);
  }

  /** The user with this email, when exactly one has it. */
  userByEmail(email: string | null | undefined): number | undefined {
    return email ? this.users.get(fold(email)) : undefined;
  }
}

/**
 * Accession first (exact), then each name column in order; a name shared by several records
 * resolves to none of them (the reference is ambiguous, so it is reported as missing).
 */
async function lookup(
  manager: EntityManager,
  tracked: TrackedRecordsRepository,
  table: TrackedTable,
  nameColumns: string[],
  refs: string[],
): Promise<Map<string, number>> {
  const result = new Map<string, number>();
  if (refs.length === 0) return result;
  const folded = [...new Set(refs.map(fold))];
  const rows = await tracked.withAccessionOrName(
    manager,
    table,
    nameColumns,
    [...new Set(refs.map((r) => r.trim()))],
    folded,
  );
  // Indexed once, so a document of many references costs one pass over the rows.
  const byAccession = new Map<string, number>();
  const byName = nameColumns.map(() => new Map<string, number[]>());
  for (const row of rows) {
    if (row.elu_accession !== null && !byAccession.has(row.elu_accession)) {
      byAccession.set(row.elu_accession, row.id);
    }
    nameColumns.forEach((column, i) => {
      const name = row[column];
      if (typeof name === 'string') {
        byName[i].set(fold(name), [...(byName[i].get(fold(name)) ?? []), row.id]);
      }
    });
  }
  for (const ref of new Set(refs)) {
    const accessionId = byAccession.get(ref.trim());
    if (accessionId !== undefined) {
      result.set(fold(ref), accessionId);
      continue;
    }
    for (const names of byName) {
      const hits = names.get(fold(ref)) ?? [];
      if (hits.length === 1) {
        result.set(fold(ref), hits[0]);
        break;
      }
    }
  }
  return result;
}

async function existingIds(
  manager: EntityManager,
  tracked: TrackedRecordsRepository,
  table: TrackedTable,
  ids: number[],
): Promise<Set<number>> {
  if (ids.length === 0) return new Set();
  return tracked.existingIds(manager, table, ids);
}

async function usersByEmail(
  manager: EntityManager,
  users: UsersRepository,
  emails: string[],
): Promise<Map<string, number>> {
  const result = new Map<string, number>();
  if (emails.length === 0) return result;
  const rows = await users.withEmails(manager, [...new Set(emails.map(fold))]);
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.email, (counts.get(row.email) ?? 0) + 1);
  for (const row of rows) if (counts.get(row.email) === 1) result.set(row.email, row.id);
  return result;
}
