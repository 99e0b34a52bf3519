import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AuditActor, AuditService } from '../audit/audit.service';
import { ADVISORY_LOCKS } from '../common/advisory-locks';

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
    private readonly audit: AuditService,
  ) {}

  /** `actor`: the scheduler or the CLI, for the audit trail. */
  async expire(
    actor: AuditActor = { kind: 'system', name: 'access expiry' },
  ): Promise<ExpiryResult> {
    return this.dataSource.transaction(async (manager) => {
      const [{ locked }] = await manager.query<{ locked: boolean }[]>(
        'SELECT pg_try_advisory_xact_lock($1) AS locked',
        [ADVISORY_LOCKS.accessExpiry],
      );
      if (!locked) return { ran: false, terminated: 0 };
      // Wrapped in a CTE: TypeORM returns [rows, count] for a bare UPDATE ... RETURNING.
      const rows = await manager.query<{ id: number; grant_expires_on: string }[]>(
        `WITH expired AS (UPDATE accesses SET status = 'terminated',
           access_notes = concat_ws(E'\\n', NULLIF(access_notes, ''),
             'Automatically terminated: expired on ' || grant_expires_on::text),
           updated_at = now()
         WHERE status <> 'terminated' AND grant_expires_on < (now() AT TIME ZONE 'UTC')::date
         RETURNING id, grant_expires_on::text AS grant_expires_on) SELECT * FROM expired`,
      );
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
