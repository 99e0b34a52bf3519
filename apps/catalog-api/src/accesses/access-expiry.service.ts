import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditActor, AuditService } from '../audit/audit.service';
import { ADVISORY_LOCKS } from '../common/advisory-locks';
import { DatabaseRepository } from '../database/database.repository';
import { AccessesRepository } from './accesses.repository';

export interface ExpiryResult {
  /** false: another replica was terminating expired accesses at the same moment. */
  ran: boolean;
  terminated: number;
}

/**
 * Terminates accesses whose last day has passed (UTC; an access expiring today is still
 * valid), noting why. Idempotent; replicas running it at once are kept apart by an advisory
 * lock, so each access is terminated and noted once.
 */
@Injectable()
export class AccessExpiryService {
  private readonly logger = new Logger(AccessExpiryService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly database: DatabaseRepository,
    private readonly accesses: AccessesRepository,
    private readonly audit: AuditService,
  ) {}

  /** `actor`: the scheduler or the CLI, for the audit trail. */
  async expire(
    actor: AuditActor = { kind: 'system', name: 'access expiry' },
  ): Promise<ExpiryResult> {
    return this.dataSource.transaction(async (manager) => {
      if (!(await this.database.tryLockForTransaction(manager, ADVISORY_LOCKS.accessExpiry)))
        return { ran: false, terminated: 0 };
      const rows = await this.accesses.terminateExpired(manager);
      await this.audit.recordMany(
        manager,
        rows.map((row) => ({
          actor,
          action: 'expire',
          objectType: 'access',
          objectId: row.id,
          change: { status: 'terminated', grant_expires_on: row.grant_expires_on },
        })),
      );
      if (rows.length > 0)
        this.logger.log({ terminated: rows.length }, 'expired accesses terminated');
      return { ran: true, terminated: rows.length };
    });
  }
}
