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

/**
 * Positions `from`..`to` of the chain, to check; `before` is the hash the first of them
 * follows (the anchor's), else the hash stored at position `from` − 1.
 */
export interface ChainRange {
  from: string;
  to: string;
  before?: Buffer;
}

/** One range checked: its entries and the first entry that breaks the chain. */
export interface RangeCheck {
  entries: number;
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

  /** The first and last positions still in the log, or undefined when it is empty. */
  async span(manager: EntityManager): Promise<{ first: string; last: string } | undefined> {
    const [row] = await manager.query<{ first: string | null; last: string | null }[]>(
      'SELECT min(id)::text AS first, max(id)::text AS last FROM audit_log',
    );
    return row.first === null || row.last === null
      ? undefined
      : { first: row.first, last: row.last };
  }

  /** The entry at position `seq` as a chain point, if it is there. */
  async pointAt(manager: EntityManager, seq: string): Promise<ChainPoint | undefined> {
    const [row] = await manager.query<ChainPoint[]>(
      'SELECT id::text AS seq, hash FROM audit_log WHERE id = $1',
      [seq],
    );
    return row;
  }

  /** Names the caller's snapshot (REPEATABLE READ) so other connections can read in it. */
  async exportSnapshot(manager: EntityManager): Promise<string> {
    const [row] = await manager.query<{ id: string }[]>('SELECT pg_export_snapshot() AS id');
    return row.id;
  }

  /** Reads in a snapshot another transaction exported: the first statement of a REPEATABLE READ one. */
  async useSnapshot(manager: EntityManager, snapshot: string): Promise<void> {
    if (!/^[0-9A-F-]+$/i.test(snapshot)) throw new Error(`not a snapshot id: ${snapshot}`);
    await manager.query(`SET TRANSACTION SNAPSHOT '${snapshot}'`);
  }

  /**
   * Checks the entries at positions `range.from`..`range.to`: each entry's hash against its
   * body, its position against the one before plus one, and its previous hash against the hash
   * before. The entry before the range is the one stored at `from` − 1 (or the anchor's hash):
   * when it is missing, the range's first entry does not follow it (a gap). One statement, one
   * pass, no sort: only the count and the first broken entry leave the database. The body is
   * hashed straight from the table's row, so PostgreSQL inlines `audit_log_body` on its columns.
   */
  async checkRange(manager: EntityManager, range: ChainRange): Promise<RangeCheck> {
    const [row] = await manager.query<
      { entries: number; broken_id: string | null; problem: 'hash' | 'gap' | 'link' | null }[]
    >(
      `WITH before AS (
         SELECT coalesce($3::bytea, (SELECT hash FROM audit_log WHERE id = $1::bigint - 1)) AS hash
       ),
       checked AS (
         SELECT a.id, CASE
           WHEN sha256(a.prev_hash || convert_to(audit_log_body(a), 'UTF8')) <> a.hash THEN 'hash'
           WHEN a.id <> coalesce(lag(a.id) OVER w, $1::bigint - 1) + 1 THEN 'gap'
           WHEN lag(a.id) OVER w IS NULL AND (SELECT hash FROM before) IS NULL THEN 'gap'
           WHEN a.prev_hash <> coalesce(lag(a.hash) OVER w, (SELECT hash FROM before)) THEN 'link'
         END AS problem
         FROM audit_log a WHERE a.id BETWEEN $1 AND $2
         WINDOW w AS (ORDER BY a.id)
       )
       SELECT count(*)::int AS entries,
              ((array_agg(id ORDER BY id) FILTER (WHERE problem IS NOT NULL))[1])::text AS broken_id,
              (array_agg(problem ORDER BY id) FILTER (WHERE problem IS NOT NULL))[1] AS problem
       FROM checked`,
      [range.from, range.to, range.before ?? null],
    );
    return {
      entries: row.entries,
      ...(row.broken_id === null
        ? {}
        : { broken: { id: row.broken_id, problem: row.problem as 'hash' | 'gap' | 'link' } }),
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
