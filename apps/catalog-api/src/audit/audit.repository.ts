import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { AuditEntry } from './audit-entry.entity';

/** One row of `audit_log` as written (the id and time are the database's). */
export interface AuditRow {
  actor_kind: string;
  actor_id: string | null;
  actor_name: string | null;
  action: string;
  object_type: string;
  object_id: string | null;
  change: unknown;
}

/** Narrows the log; every field optional. */
export interface AuditFilter {
  since?: Date;
  objectType?: string;
  objectId?: string;
}

@Injectable()
export class AuditRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Appends the rows in one statement, in the order given, with the caller's transaction. They
   * travel as one JSON parameter, so no number of rows meets PostgreSQL's limit of 65,535 bind
   * parameters.
   */
  async insert(manager: EntityManager, rows: AuditRow[]): Promise<void> {
    if (rows.length === 0) return;
    const columns = Object.keys(rows[0]).join(', ');
    await manager.query(
      `INSERT INTO audit_log (${columns})
       SELECT ${columns} FROM json_populate_recordset(NULL::audit_log, $1::json) WITH ORDINALITY AS e
       ORDER BY e.ordinality`,
      [JSON.stringify(rows)],
    );
  }

  /** Entries matching `filter`, newest first, `limit` of them from `offset`. */
  page(filter: AuditFilter, offset: number, limit: number): Promise<AuditEntry[]> {
    const qb = this.dataSource.getRepository(AuditEntry).createQueryBuilder('a');
    if (filter.since !== undefined) qb.andWhere('a.at >= :since', { since: filter.since });
    if (filter.objectType !== undefined) {
      qb.andWhere('a.object_type = :type', { type: filter.objectType });
    }
    if (filter.objectId !== undefined) qb.andWhere('a.object_id = :id', { id: filter.objectId });
    return qb
      .orderBy('a.at', 'DESC')
      .addOrderBy('a.id', 'DESC')
      .offset(offset)
      .limit(limit)
      .getMany();
  }
}
