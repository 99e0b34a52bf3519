import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { TimestampedRecord } from '../common/tracked-record';
import { Partner } from '../partners/partner.entity';
import { Dataset } from './dataset.entity';

/** A logged hand-over of (part of) a dataset to a partner. */
@Entity({ name: 'transfers' })
@Index('IDX_transfers_dataset', ['dataset'])
@Index('IDX_transfers_partner', ['partner'])
export class Transfer extends TimestampedRecord {
  @ManyToOne(() => Dataset, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'dataset_id' })
  dataset!: Dataset;

  @ManyToOne(() => Partner, { nullable: true, onDelete: 'SET NULL' })
  @JoinColumn({ name: 'partner_id' })
  partner!: Partner | null;

  @Column({ name: 'transfer_details', type: 'text', nullable: true })
  transferDetails!: string | null;

  @Column({ name: 'transfer_date', type: 'date', nullable: true })
  transferDate!: string | null;

  /** The provisioner import that made this transfer (unique: one transfer per import); else null. */
  @Column({ name: 'import_id', type: 'varchar', length: 255, nullable: true })
  importId!: string | null;
}
