import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/**
 * A signed statement of one chain position and its hash: written before pruning (the entries
 * up to `seq` are deleted, and the chain is verified from here), and the proof an export
 * carries of the head it was cut at. `jws` is a compact JWS (EdDSA or ES256) over
 * `{seq, hash, at, purpose}`, signed with `AUDIT_SIGNING_KEY_FILE`.
 */
@Entity({ name: 'audit_checkpoints' })
export class AuditCheckpoint {
  @PrimaryColumn({ type: 'bigint' })
  seq!: string;

  @Column({ type: 'bytea' })
  hash!: Buffer;

  /** The time of entry `seq`. */
  @Column({ name: 'entry_at', type: 'timestamptz' })
  entryAt!: Date;

  @CreateDateColumn({ name: 'signed_at', type: 'timestamptz' })
  signedAt!: Date;

  /** The signing key's JWK thumbprint (RFC 7638). */
  @Column({ name: 'key_id', type: 'varchar', length: 100 })
  keyId!: string;

  @Column({ type: 'text' })
  jws!: string;
}
