import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * One write to the catalog: who did it (key kind and identity), what, to which object, when,
 * and the change. Append-only; never holds secrets (keys, key hashes).
 */
@Entity({ name: 'audit_log' })
@Index('IDX_audit_log_at', ['at'])
@Index('IDX_audit_log_object', ['objectType', 'objectId', 'at'])
export class AuditEntry {
  // bigint: the log only grows; pg returns it as a string.
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @CreateDateColumn({ name: 'at', type: 'timestamptz' })
  at!: Date;

  /** `global`, `user`, `endpoint`, `cli`, `system`, ... */
  @Column({ name: 'actor_kind', type: 'varchar', length: 32 })
  actorKind!: string;

  @Column({ name: 'actor_id', type: 'varchar', length: 150, nullable: true })
  actorId!: string | null;

  @Column({ name: 'actor_name', type: 'varchar', length: 255, nullable: true })
  actorName!: string | null;

  /** e.g. `create`, `update`, `publish`, `rotate-key`, `grant`. */
  @Column({ type: 'varchar', length: 64 })
  action!: string;

  /** e.g. `partner`, `dataset`, `user`, `exposure`, `vocabulary`. */
  @Column({ name: 'object_type', type: 'varchar', length: 64 })
  objectType!: string;

  @Column({ name: 'object_id', type: 'varchar', length: 255, nullable: true })
  objectId!: string | null;

  /** New values or a before/after diff; secrets are removed before writing. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  change!: Record<string, unknown>;
}
