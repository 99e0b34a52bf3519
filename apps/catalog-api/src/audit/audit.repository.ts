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

/** An entry reported by another service, with its own id (the idempotency key). */
export interface ReportedAuditRow extends AuditRow {
  event_id: string;
}

/** A position of the chain and its hash. */
export interface ChainPoint {
  seq: string;
  hash: Buffer;
}

/** One batch of the chain checked: how far it reached and the first entry that breaks it. */
export interface ChainBatch {
  entries: number;
  last?: ChainPoint;
  broken?: { id: string; problem: 'hash' | 'gap' | 'link' };
}

export interface StoredCheckpoint extends ChainPoint {
  entry_at: Date;
  key_id: string;
  jws: string;
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

  /**
   * Appends entries another service reported, skipping those whose event id is already in
   * the trail (a retried report). The head lock is taken first, so the check and the insert
   * see every append before them: two reports of one event never both pass the check.
   */
  async insertReported(manager: EntityManager, rows: ReportedAuditRow[]): Promise<number> {
    if (rows.length === 0) return 0;
    await this.lockHead(manager);
    const columns = Object.keys(rows[0]).join(', ');
    const inserted = await manager.query<{ id: string }[]>(
      `INSERT INTO audit_log (${columns})
       SELECT ${columns} FROM json_populate_recordset(NULL::audit_log, $1::json) WITH ORDINALITY AS e
       WHERE NOT EXISTS (SELECT 1 FROM audit_log a WHERE a.event_id = e.event_id)
       ORDER BY e.ordinality
       RETURNING id`,
      [JSON.stringify(rows)],
    );
    return inserted.length;
  }

  /** The chain head, locked until the caller's transaction ends (appends wait meanwhile). */
  async lockHead(manager: EntityManager): Promise<ChainPoint> {
    const [head] = await manager.query<ChainPoint[]>(
      'SELECT seq::text AS seq, hash FROM audit_log_head WHERE id = 1 FOR UPDATE',
    );
    return head;
  }

  async head(manager: EntityManager): Promise<ChainPoint & { at: Date | null }> {
    const [head] = await manager.query<(ChainPoint & { at: Date | null })[]>(
      `SELECT h.seq::text AS seq, h.hash, a.at
       FROM audit_log_head h LEFT JOIN audit_log a ON a.id = h.seq WHERE h.id = 1`,
    );
    return head;
  }

  /** The first position still in the log, or undefined when it is empty. */
  async firstId(manager: EntityManager): Promise<string | undefined> {
    const [row] = await manager.query<{ id: string | null }[]>(
      'SELECT min(id)::text AS id FROM audit_log',
    );
    return row.id ?? undefined;
  }

  /**
   * Checks up to `limit` entries after position `after`, whose hash is `afterHash`: each
   * entry's hash against its body, its position against the one before plus one, and its
   * previous hash against the hash before. One statement: only the first broken entry and the
   * last one checked leave the database.
   */
  async checkBatch(manager: EntityManager, after: ChainPoint, limit: number): Promise<ChainBatch> {
    const [row] = await manager.query<
      {
        entries: number;
        last_id: string | null;
        last_hash: Buffer | null;
        broken_id: string | null;
        problem: 'hash' | 'gap' | 'link' | null;
      }[]
    >(
      `WITH batch AS (
         SELECT id, prev_hash, hash,
                sha256(prev_hash || convert_to(audit_log_body(a), 'UTF8')) AS computed,
                lag(id) OVER (ORDER BY id) AS before_id,
                lag(hash) OVER (ORDER BY id) AS before_hash
         FROM (SELECT * FROM audit_log WHERE id > $1 ORDER BY id LIMIT $3) a
       ),
       checked AS (
         SELECT id, CASE
           WHEN computed <> hash THEN 'hash'
           WHEN id <> coalesce(before_id, $1) + 1 THEN 'gap'
           WHEN prev_hash <> coalesce(before_hash, $2) THEN 'link'
         END AS problem
         FROM batch
       )
       SELECT (SELECT count(*)::int FROM batch) AS entries,
              (SELECT b.id::text FROM batch b ORDER BY b.id DESC LIMIT 1) AS last_id,
              (SELECT b.hash FROM batch b ORDER BY b.id DESC LIMIT 1) AS last_hash,
              b.id::text AS broken_id, b.problem
       FROM (SELECT 1) one
       LEFT JOIN LATERAL (
         SELECT id, problem FROM checked WHERE problem IS NOT NULL ORDER BY id LIMIT 1
       ) b ON true`,
      [after.seq, after.hash, limit],
    );
    return {
      entries: row.entries,
      last: row.last_id === null ? undefined : { seq: row.last_id, hash: row.last_hash as Buffer },
      broken:
        row.broken_id === null
          ? undefined
          : { id: row.broken_id, problem: row.problem as 'hash' | 'gap' | 'link' },
    };
  }

  /** The signed checkpoint at exactly position `seq`, if one was written. */
  async checkpointAt(manager: EntityManager, seq: string): Promise<StoredCheckpoint | undefined> {
    const [row] = await manager.query<StoredCheckpoint[]>(
      `SELECT seq::text AS seq, hash, entry_at, key_id, jws FROM audit_checkpoints WHERE seq = $1`,
      [seq],
    );
    return row;
  }

  /** The position of the newest entry chained before `before`, with its hash and time. */
  async lastBefore(
    manager: EntityManager,
    before: Date,
  ): Promise<(ChainPoint & { at: Date }) | undefined> {
    const [row] = await manager.query<(ChainPoint & { at: Date })[]>(
      `SELECT id::text AS seq, hash, at FROM audit_log
       WHERE id = (SELECT max(id) FROM audit_log WHERE at < $1)`,
      [before],
    );
    return row;
  }

  async saveCheckpoint(manager: EntityManager, checkpoint: StoredCheckpoint): Promise<void> {
    await manager.query(
      `INSERT INTO audit_checkpoints (seq, hash, entry_at, key_id, jws) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (seq) DO NOTHING`,
      [checkpoint.seq, checkpoint.hash, checkpoint.entry_at, checkpoint.key_id, checkpoint.jws],
    );
  }

  /**
   * Deletes the entries up to position `seq`: the only delete the append-only trigger lets
   * through, marked for this transaction alone (`set_config(..., true)`: no session state).
   */
  async pruneThrough(manager: EntityManager, seq: string): Promise<number> {
    await manager.query(`SELECT set_config('audit.prune', 'on', true)`);
    const [{ n }] = await manager.query<{ n: number }[]>(
      'WITH gone AS (DELETE FROM audit_log WHERE id <= $1 RETURNING 1) SELECT count(*)::int AS n FROM gone',
      [seq],
    );
    await manager.query(`SELECT set_config('audit.prune', 'off', true)`);
    return n;
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
