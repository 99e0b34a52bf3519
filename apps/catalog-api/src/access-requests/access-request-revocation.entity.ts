import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Dataset } from '../datasets/dataset.entity';

/**
 * The latest revocation REMS sent for an entitlement key, kept even when no access exists
 * (the grant may still be on its way: REMS retries each delivery on its own schedule, so a
 * revocation can overtake the grant it revokes). A grant built before this revocation changes
 * nothing; a revocation older than this one changes nothing.
 */
@Entity({ name: 'access_request_revocations' })
export class AccessRequestRevocation {
  @PrimaryColumn({ name: 'application_id', type: 'integer' })
  applicationId!: number;

  @PrimaryColumn({ name: 'dataset_id', type: 'integer' })
  datasetId!: number;

  @ManyToOne(() => Dataset, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'dataset_id' })
  dataset!: Dataset;

  @PrimaryColumn({ name: 'request_subject', type: 'varchar', length: 64 })
  requestSubject!: string;

  /** REMS's `end` of the revocation (when REMS ended the entitlement), to the millisecond. */
  @Column({ name: 'revoked_at', type: 'timestamptz' })
  revokedAt!: Date;
}
