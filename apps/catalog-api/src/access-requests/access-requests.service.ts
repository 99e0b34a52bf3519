import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AuditActor, AuditRecord, AuditService } from '../audit/audit.service';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { KeycloakAdminClient } from '../identity/keycloak-admin.client';
import type { KeycloakUser } from '../identity/keycloak-types';
import {
  newContact,
  PeopleRepository,
  personAudit,
  IdentityFacts,
} from '../people/people.repository';
import type { PersonDirectory, PersonRecord } from '../people/person-directory';
import { byEntitlementKey, Entitlement, KeyedEntitlement } from './entitlement';
import { EntitlementsRefusedError, RefusedItem } from './entitlement-refusal';
import { DatasetsRepository } from '../datasets/datasets.repository';
import { UsersRepository } from '../users/users.repository';
import { AccessChange, Outcome, RequestAccessesRepository } from './request-accesses.repository';
import { ACCESS_REQUEST_ACCOUNT } from './system-account';

export interface BatchCounts {
  created: number;
  updated: number;
  unchanged: number;
}

/** Time allowed for all identity-provider look-ups of one delivery (REMS gives up at 2.5 s). */
export const WEBHOOK_IDP_BUDGET_MS = 1500;
/** Look-ups run side by side, a few at a time. */
const IDP_LOOKUP_CONCURRENCY = 8;

/** What the catalog learns about one requesting subject before matching. */
interface Profile {
  /** Applied to a matched record (null fields keep what is stored). */
  update: IdentityFacts;
  /** Used for a new contact. */
  create: IdentityFacts;
  /** Email used to match by mail (with an identity provider, one it has verified). */
  matchEmail: string | null;
}

function utcDate(offsetDays = 0): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

function actorOf(accountId: number): AuditActor {
  return { kind: 'accessreq', id: accountId, name: ACCESS_REQUEST_ACCOUNT.username };
}

/** Audit entries for the accesses a batch changed (unchanged ones leave no trace). */
function accessAudit(
  actor: AuditActor,
  action: 'grant' | 'revoke',
  item: KeyedEntitlement,
  change: AccessChange,
  duo?: string[],
): AuditRecord[] {
  if (change.outcome === 'unchanged') return [];
  return [
    {
      actor,
      action: change.outcome === 'created' || action === 'revoke' ? action : 'update',
      objectType: 'access',
      objectId: change.accessId,
      change: {
        application: item.application,
        dataset: item.resource,
        subject: item.user,
        // The data-use terms the person was granted the dataset under, as they stood then.
        ...(duo === undefined ? {} : { duo }),
        ...(change.before === undefined ? {} : { before: change.before }),
        after: change.after,
      },
    },
  ];
}

function tally(changes: AccessChange[]): BatchCounts {
  const counts: Record<Outcome, number> = { created: 0, updated: 0, unchanged: 0 };
  for (const change of changes) counts[change.outcome]++;
  return counts;
}

/** Entitlements ignored because a newer revocation was already applied (for the log line). */
function staleCount(changes: AccessChange[]): number {
  return changes.filter((change) => change.stale).length;
}

/**
 * Grants and revokes accesses from REMS entitlements (spec §4). A batch is all or nothing:
 * every item is checked (accessions, identity-provider accounts, unambiguous people) and
 * written in one transaction. Subjects are locked for the transaction, so retried and
 * concurrent deliveries of the same entitlement end in one access. The rows of one
 * (application, resource, user) are one entitlement (`byEntitlementKey`), and the counts are
 * per entitlement.
 */
@Injectable()
export class AccessRequestsService {
  private readonly logger = new Logger(AccessRequestsService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly people: PeopleRepository,
    private readonly accesses: RequestAccessesRepository,
    private readonly datasets: DatasetsRepository,
    private readonly users: UsersRepository,
    private readonly idp: KeycloakAdminClient,
    private readonly audit: AuditService,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  async grant(items: Entitlement[]): Promise<BatchCounts> {
    if (items.length === 0) return { created: 0, updated: 0, unchanged: 0 };
    const entitlements = byEntitlementKey(items);
    await this.datasetIds(this.dataSource.manager, items);
    const profiles = await this.profiles(items);
    const changes = await this.dataSource.transaction(async (manager) => {
      const datasets = await this.datasetIds(manager, items, true);
      const subjects = items.map((item) => item.user);
      await this.people.lockSubjects(manager, subjects);
      const emails = [...profiles.values()].flatMap((p) =>
        p.matchEmail === null ? [] : [p.matchEmail],
      );
      const directory = await this.people.load(manager, subjects, emails);
      const createdById = await this.users.systemAccountId(manager, ACCESS_REQUEST_ACCOUNT);
      const actor = actorOf(createdById);
      const trail: AuditRecord[] = [];
      const holders = await this.resolveAll(manager, directory, items, profiles, (entry) =>
        trail.push(entry(actor)),
      );
      const context = {
        now: Date.now(),
        today: utcDate(),
        defaultExpiry: utcDate(this.settings.ACCESS_DEFAULT_EXPIRATION_DAYS),
        createdById,
      };
      const inputs = entitlements.map((entitlement) => ({
        application: entitlement.application,
        datasetId: datasets.get(entitlement.resource) as number,
        subject: entitlement.user,
        holder: holders.get(entitlement.user) as PersonRecord,
        endDate: entitlement.endDate,
        rowEnds: entitlement.rowEnds,
      }));
      const results = await this.accesses.grantAll(manager, inputs, context);
      // Read only when the trail gets an entry: a retried delivery changes nothing.
      const terms = results.some((change) => change.outcome !== 'unchanged')
        ? await this.datasets.duoTerms(manager, [...new Set(datasets.values())])
        : new Map<number, string[]>();
      results.forEach((change, n) => {
        const duo = terms.get(datasets.get(entitlements[n].resource) as number) ?? [];
        for (const entry of accessAudit(actor, 'grant', entitlements[n], change, duo))
          trail.push(entry);
      });
      await this.audit.recordMany(manager, trail);
      return results;
    });
    return this.processed('access request processed', items, entitlements, changes);
  }

  async revoke(items: Entitlement[]): Promise<BatchCounts> {
    if (items.length === 0) return { created: 0, updated: 0, unchanged: 0 };
    const entitlements = byEntitlementKey(items);
    const changes = await this.dataSource.transaction(async (manager) => {
      const datasets = await this.datasetIds(manager, items, true);
      await this.people.lockSubjects(
        manager,
        items.map((item) => item.user),
      );
      const actor = actorOf(await this.users.systemAccountId(manager, ACCESS_REQUEST_ACCOUNT));
      const now = Date.now();
      const inputs = entitlements.map((entitlement) => ({
        application: entitlement.application,
        datasetId: datasets.get(entitlement.resource) as number,
        subject: entitlement.user,
        // REMS ends every row of the key at the revocation time and sends it as `end`; an end
        // still to come is not a revocation time, and must not outrank the grants until then.
        revokedAt: Math.min(entitlement.endTime ?? now, now),
      }));
      const results = await this.accesses.revokeAll(manager, inputs, utcDate());
      const trail = results.flatMap((change, n) =>
        accessAudit(actor, 'revoke', entitlements[n], change),
      );
      await this.audit.recordMany(manager, trail);
      return results;
    });
    return this.processed('access revocation processed', items, entitlements, changes);
  }

  /** Logs what a batch changed, and answers its counts. */
  private processed(
    message: string,
    items: Entitlement[],
    entitlements: KeyedEntitlement[],
    changes: AccessChange[],
  ): BatchCounts {
    const counts = tally(changes);
    this.logger.log(
      {
        items: items.length,
        entitlements: entitlements.length,
        ...counts,
        stale: staleCount(changes),
      },
      message,
    );
    return counts;
  }

  /** Dataset ids by accession; any unknown accession fails the batch naming it. */
  private async datasetIds(
    manager: EntityManager,
    items: Entitlement[],
    lock = false,
  ): Promise<Map<string, number>> {
    const accessions = [...new Set(items.map((item) => item.resource))];
    const ids = await this.datasets.idsByAccession(manager, accessions, lock);
    const refused: RefusedItem[] = [];
    items.forEach((item, index) => {
      if (!ids.has(item.resource)) {
        refused.push({
          index,
          field: 'resource',
          message: `unknown dataset accession ${item.resource}`,
          reason: 'unknown_dataset',
        });
      }
    });
    if (refused.length > 0) {
      const unknown = [
        ...new Set(items.filter((i) => !ids.has(i.resource)).map((i) => i.resource)),
      ];
      throw new EntitlementsRefusedError(
        refused,
        `Unknown dataset accession: ${unknown.join(', ')}`,
      );
    }
    return ids;
  }

  /**
   * One profile per subject: from the identity provider when it is configured (one look-up
   * per subject, within a fixed budget), else from the request's `mail`. Like DAISY
   * (elixir-luxembourg/daisy `core/lcsb/oidc.py`, `get_external_user_info`), an account whose
   * email the provider has not verified is refused: it gets no access until the person
   * verifies the address (REMS's retries then deliver the grant).
   */
  private async profiles(items: Entitlement[]): Promise<Map<string, Profile>> {
    const bySubject = new Map<string, Entitlement>();
    for (const item of items) if (!bySubject.has(item.user)) bySubject.set(item.user, item);
    const profiles = new Map<string, Profile>();
    if (!this.idp.configured) {
      for (const [subject, item] of bySubject) {
        const none = { subject, firstName: null, lastName: null, email: null };
        profiles.set(subject, {
          update: none,
          create: { ...none, email: item.mail },
          matchEmail: item.mail,
        });
      }
      return profiles;
    }
    const budget = AbortSignal.timeout(WEBHOOK_IDP_BUDGET_MS);
    const subjects = [...bySubject.keys()];
    const accounts = new Map<string, KeycloakUser | null>();
    for (let i = 0; i < subjects.length; i += IDP_LOOKUP_CONCURRENCY) {
      const slice = subjects.slice(i, i + IDP_LOOKUP_CONCURRENCY);
      const found = await Promise.all(slice.map((s) => this.idp.getUser(s, budget)));
      slice.forEach((subject, n) => accounts.set(subject, found[n]));
    }
    const refused: RefusedItem[] = [];
    items.forEach((item, index) => {
      const account = accounts.get(item.user);
      if (account === null) {
        refused.push({
          index,
          field: 'user',
          message: `unknown to the identity provider: ${item.user}`,
          reason: 'unknown_account',
        });
      } else if (account?.emailVerified !== true) {
        refused.push({
          index,
          field: 'user',
          message: `the identity provider has not verified the email of ${item.user}`,
          reason: 'unverified_email',
        });
      }
    });
    if (refused.length > 0) throw new EntitlementsRefusedError(refused);
    for (const [subject, account] of accounts)
      profiles.set(subject, profileOf(subject, account as KeycloakUser));
    return profiles;
  }

  /** The holder of each subject's accesses, creating contacts for people the catalog lacks. */
  private async resolveAll(
    manager: EntityManager,
    directory: PersonDirectory,
    items: Entitlement[],
    profiles: Map<string, Profile>,
    audit: (entry: (actor: AuditActor) => AuditRecord) => void,
  ): Promise<Map<string, PersonRecord>> {
    const holders = new Map<string, PersonRecord>();
    const problems: RefusedItem[] = [];
    const created: IdentityFacts[] = [];
    for (const [index, item] of items.entries()) {
      if (holders.has(item.user)) continue;
      const profile = profiles.get(item.user) as Profile;
      const resolution = directory.resolve(item.user, profile.matchEmail);
      if (resolution.outcome === 'conflict') {
        problems.push({
          index,
          field: 'mail',
          message: resolution.reason,
          reason: 'ambiguous_person',
        });
        continue;
      }
      let holder: PersonRecord;
      if (resolution.outcome === 'create') {
        // Inserted below in one statement; until then a stand-in (negative id) lets the rest of
        // the delivery match against it exactly as against the stored contact.
        created.push(profile.create);
        holder = newContact(profile.create, -created.length);
      } else {
        const before = resolution.person;
        const updated = await this.people.update(manager, before, profile.update);
        if (updated !== null) audit((actor) => personAudit(actor, before, updated));
        holder = updated ?? before;
      }
      directory.put(holder);
      holders.set(item.user, holder);
    }
    if (problems.length === 0) {
      for (const contact of await this.people.createContacts(manager, created)) {
        holders.set(contact.oidcId as string, contact);
        audit((actor) => personAudit(actor, null, contact));
      }
    }
    if (problems.length > 0) {
      // Thrown inside the transaction: the rollback undoes whatever this batch already wrote.
      throw new EntitlementsRefusedError(
        problems,
        problems.length === 1
          ? `Ambiguous person: ${problems[0].message}`
          : `Ambiguous people: ${problems.length} items`,
      );
    }
    return holders;
  }
}

/** The profile of an account whose email the provider has verified (others are refused). */
function profileOf(subject: string, account: KeycloakUser): Profile {
  const email =
    typeof account.email === 'string' && account.email.trim() !== '' ? account.email.trim() : null;
  const facts: IdentityFacts = {
    subject,
    firstName: typeof account.firstName === 'string' ? account.firstName : null,
    lastName: typeof account.lastName === 'string' ? account.lastName : null,
    email,
  };
  return { update: facts, create: facts, matchEmail: email };
}
