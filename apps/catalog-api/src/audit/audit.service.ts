import { Injectable } from '@nestjs/common';
import type { Principal } from '@app/auth';
import { DataSource, type EntityManager } from 'typeorm';
import type { ReportedEventInput } from './audit-events.dto';
import { AuditFilter, AuditRepository, AuditRow, ReportedAuditRow } from './audit.repository';

/** Who made a change. Build it from a request principal with `actorFromPrincipal`. */
export interface AuditActor {
  /** Key kind (`global`, `user`, `endpoint`) or another origin (`cli`, `system`, `accessreq`). */
  kind: string;
  id?: string | number | null;
  name?: string | null;
}

export interface AuditRecord {
  actor: AuditActor;
  action: string;
  objectType: string;
  objectId?: string | number | null;
  /** New values or `{before, after}`; secret-looking keys are dropped before writing. */
  change?: Record<string, unknown>;
}

export interface AuditQuery extends AuditFilter {
  page: number;
  pageSize: number;
}

export interface AuditView {
  id: number;
  at: string;
  actor: { kind: string; id: string | null; name: string | null };
  action: string;
  object_type: string;
  object_id: string | null;
  change: Record<string, unknown>;
}

/** Entries per INSERT: bounds the text of one statement, not a database limit. */
const AUDIT_ROWS_PER_STATEMENT = 2000;

/** Keys whose values must never reach the log, whatever a caller passes. */
const SECRET_KEY = /(api_?key|key_?hash|password|secret|token)/i;

export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (value === null || typeof value !== 'object' || value instanceof Date) return value;
  const clean: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (!SECRET_KEY.test(key)) clean[key] = withoutSecrets(inner);
  }
  return clean;
}

export function actorFromPrincipal(principal: Principal | undefined): AuditActor {
  if (principal === undefined) return { kind: 'anonymous' };
  return { kind: principal.kind, id: principal.id ?? null, name: principal.name ?? null };
}

/**
 * The audit trail. `record` writes with the caller's transaction manager, so an entry exists
 * exactly when the change it describes was committed; the database chains it (see
 * AuditEntry). Record last in a transaction: from the first entry on, the transaction holds
 * the chain head, and every other writer's entry waits for its commit.
 */
@Injectable()
export class AuditService {
  constructor(
    private readonly entries: AuditRepository,
    private readonly dataSource: DataSource,
  ) {}

  /**
   * Events another service saw (the provisioner's DRS decisions, bytes served, imports
   * published), chained in the order given in one transaction; an event id already in the
   * trail is skipped, so a retried report records nothing twice.
   */
  async report(
    events: ReportedEventInput[],
    actor: AuditActor,
  ): Promise<{ recorded: number; already: number }> {
    const rows = events.map((event): ReportedAuditRow => {
      const [objectType, action] = event.type.split('.');
      const { id, type: _type, object_id, ...facts } = event;
      return {
        event_id: id,
        actor_kind: actor.kind,
        actor_id: actor.id === undefined || actor.id === null ? null : String(actor.id),
        actor_name: actor.name ?? null,
        action,
        object_type: objectType,
        object_id,
        change: withoutSecrets(facts),
      };
    });
    const recorded = await this.dataSource.transaction((manager) =>
      this.entries.insertReported(manager, rows),
    );
    return { recorded, already: events.length - recorded };
  }

  async record(manager: EntityManager, entry: AuditRecord): Promise<void> {
    await this.recordMany(manager, [entry]);
  }

  /**
   * A few statements whatever the number of entries: each chunk travels as one JSON parameter,
   * so a large import never meets PostgreSQL's limit of 65,535 bind parameters, and only one
   * chunk's text is held at a time.
   */
  async recordMany(manager: EntityManager, entries: AuditRecord[]): Promise<void> {
    const text = (value: string | number | null | undefined) =>
      value === undefined || value === null ? null : String(value);
    for (let from = 0; from < entries.length; from += AUDIT_ROWS_PER_STATEMENT) {
      const rows = entries.slice(from, from + AUDIT_ROWS_PER_STATEMENT).map((e): AuditRow => ({
        actor_kind: e.actor.kind,
        actor_id: text(e.actor.id),
        actor_name: e.actor.name ?? null,
        action: e.action,
        object_type: e.objectType,
        object_id: text(e.objectId),
        change: withoutSecrets(e.change ?? {}),
      }));
      await this.entries.insert(manager, rows);
    }
  }

  /** Newest first; one page plus whether another follows. */
  async list(query: AuditQuery): Promise<{ results: AuditView[]; more: boolean }> {
    const rows = await this.entries.page(
      query,
      (query.page - 1) * query.pageSize,
      query.pageSize + 1,
    );
    return {
      results: rows.slice(0, query.pageSize).map((row) => ({
        id: Number(row.id),
        at: row.at.toISOString().replace(/\.\d{3}Z$/, '+00:00'),
        actor: { kind: row.actorKind, id: row.actorId, name: row.actorName },
        action: row.action,
        object_type: row.objectType,
        object_id: row.objectId,
        change: row.change,
      })),
      more: rows.length > query.pageSize,
    };
  }
}
