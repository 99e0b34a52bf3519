import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { ConflictError, ServiceUnavailableError } from '@app/errors';
import { ADVISORY_LOCKS } from '../common/advisory-locks';
import { AuditActor, AuditRecord, AuditService } from '../audit/audit.service';
import { SessionLocksRepository } from '../database/session-locks.repository';
import { KeycloakAdminClient } from './keycloak-admin.client';
import type { KeycloakUser } from './keycloak-types';
import { PeopleRepository, personAudit, IdentityFacts } from '../people/people.repository';

export interface SyncCounts {
  created: number;
  updated: number;
  unchanged: number;
  skipped: number;
}

/** Subjects longer than the oidc_id column cannot be stored; such accounts are skipped. */
const SUBJECT_MAX = 64;

function factsOf(account: KeycloakUser): IdentityFacts | null {
  const email = typeof account.email === 'string' ? account.email.trim() : '';
  if (account.emailVerified !== true || email === '' || account.id.length > SUBJECT_MAX)
    return null;
  return {
    subject: account.id,
    firstName: typeof account.firstName === 'string' ? account.firstName : null,
    lastName: typeof account.lastName === 'string' ? account.lastName : null,
    email,
  };
}

/**
 * Synchronises people with the identity provider (spec §4): every account with a verified
 * email is matched like a webhook request, the match takes the provider's names, email and
 * subject, unknown accounts become contacts. Nothing is ever deleted or deactivated.
 * One run at a time across replicas (a session advisory lock, on a connection of its own to the
 * database itself); each page of accounts is its own short transaction so webhook deliveries are
 * never held up behind a whole sync.
 */
@Injectable()
export class IdpSyncService {
  private readonly logger = new Logger(IdpSyncService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly sessionLocks: SessionLocksRepository,
    private readonly idp: KeycloakAdminClient,
    private readonly people: PeopleRepository,
    private readonly audit: AuditService,
  ) {}

  /** `actor` is who asked (a global key, the scheduler, the CLI), for the audit trail. */
  async run(actor: AuditActor): Promise<SyncCounts> {
    if (!this.idp.configured) {
      throw new ServiceUnavailableError('Identity provider not configured', {
        reason: 'set IDP_URL, IDP_REALM, IDP_CLIENT_ID and IDP_CLIENT_SECRET',
      });
    }
    const lock = await this.sessionLocks.tryLock(ADVISORY_LOCKS.idpSync);
    if (lock === null)
      throw new ConflictError('An identity-provider synchronisation is already running');
    try {
      const counts = await this.syncAll(actor);
      this.logger.log(counts, 'identity-provider synchronisation finished');
      return counts;
    } finally {
      await lock.release();
    }
  }

  private async syncAll(actor: AuditActor): Promise<SyncCounts> {
    const counts: SyncCounts = { created: 0, updated: 0, unchanged: 0, skipped: 0 };
    for await (const page of this.idp.listUsers({ verifiedOnly: true })) {
      const accounts: IdentityFacts[] = [];
      for (const account of page) {
        const facts = factsOf(account);
        if (facts === null) counts.skipped++;
        else accounts.push(facts);
      }
      if (accounts.length > 0) {
        await this.dataSource.transaction((manager) =>
          this.syncPage(manager, accounts, counts, actor),
        );
      }
    }
    return counts;
  }

  private async syncPage(
    manager: EntityManager,
    accounts: IdentityFacts[],
    counts: SyncCounts,
    actor: AuditActor,
  ): Promise<void> {
    const subjects = accounts.map((a) => a.subject);
    const changes: AuditRecord[] = [];
    await this.people.lockSubjects(manager, subjects);
    const directory = await this.people.load(
      manager,
      subjects,
      accounts.map((a) => a.email as string),
    );
    for (const facts of accounts) {
      const resolution = directory.resolve(facts.subject, facts.email);
      if (resolution.outcome === 'conflict') {
        this.logger.warn({ subject: facts.subject, reason: resolution.reason }, 'account skipped');
        counts.skipped++;
      } else if (resolution.outcome === 'create') {
        const contact = await this.people.createContact(manager, facts);
        directory.put(contact);
        changes.push(personAudit(actor, null, contact));
        counts.created++;
      } else {
        const updated = await this.people.update(manager, resolution.person, facts);
        if (updated === null) {
          counts.unchanged++;
        } else {
          directory.put(updated);
          changes.push(personAudit(actor, resolution.person, updated));
          counts.updated++;
        }
      }
    }
    await this.audit.recordMany(manager, changes);
  }
}
