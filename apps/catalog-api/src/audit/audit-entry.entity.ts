import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One entry of the trail: who did it (key kind and identity), what, to which object, when, and
 * the change. Append-only and hash-chained: a database trigger (migration `AuditTrailChain`)
 * gives each new row the next position after the chain head, the time it was chained, the
 * head's hash and its own hash, `sha256(prev_hash || audit_log_body(row))`, under the head row's
 * lock; another trigger refuses updates, and deletes outside pruning. Never holds secrets.
 */
@Entity({ name: 'audit_log' })
@Index('IDX_audit_log_at', ['at'])
@Index('IDX_audit_log_object', ['objectType', 'objectId', 'at'])
export class AuditEntry {
  /** The position in the chain: 1, 2, 3 ... with no gaps (set by the trigger; a string from pg). */
  @PrimaryColumn({ type: 'bigint' })
  id!: string;

  /** The event's id, also the id of its webhook message; given by a reporting service. */
  @Index('UQ_audit_log_event_id', { unique: true })
  @Column({ name: 'event_id', type: 'uuid', default: () => 'gen_random_uuid()' })
  eventId!: string;

  /** When the entry was chained (the trigger's clock_timestamp()). */
  @CreateDateColumn({ name: 'at', type: 'timestamptz' })
  at!: Date;

  /** `global`, `user`, `endpoint`, `registrar`, `cli`, `system`, ... */
  @Column({ name: 'actor_kind', type: 'varchar', length: 32 })
  actorKind!: string;

  @Column({ name: 'actor_id', type: 'varchar', length: 150, nullable: true })
  actorId!: string | null;

  @Column({ name: 'actor_name', type: 'varchar', length: 255, nullable: true })
  actorName!: string | null;

  /** e.g. `create`, `update`, `publish`, `rotate-key`, `grant`, `issue`, `decide`. */
  @Column({ type: 'varchar', length: 64 })
  action!: string;

  /** e.g. `partner`, `dataset`, `user`, `exposure`, `vocabulary`, `access`, `visa`, `drs`. */
  @Column({ name: 'object_type', type: 'varchar', length: 64 })
  objectType!: string;

  @Column({ name: 'object_id', type: 'varchar', length: 255, nullable: true })
  objectId!: string | null;

  /** New values or a before/after diff; secrets are removed before writing. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  change!: Record<string, unknown>;

  /** The hash of the entry before (32 zero bytes before the first). */
  @Column({ name: 'prev_hash', type: 'bytea' })
  prevHash!: Buffer;

  @Column({ type: 'bytea' })
  hash!: Buffer;
}
