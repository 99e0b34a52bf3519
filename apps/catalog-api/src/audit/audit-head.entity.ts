import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * The chain head: one row, the last entry's position and hash. Every append locks it (the
 * trigger's `SELECT … FOR UPDATE`) until its transaction ends, so writers on every replica
 * take positions one at a time, and a transaction that rolls back (or whose process dies)
 * gives its positions back: no gaps, no forks.
 */
@Entity({ name: 'audit_log_head' })
@Check('CHK_audit_log_head_one_row', '"id" = 1')
export class AuditHead {
  @PrimaryColumn({ type: 'smallint' })
  id!: number;

  @Column({ type: 'bigint' })
  seq!: string;

  @Column({ type: 'bytea' })
  hash!: Buffer;
}
