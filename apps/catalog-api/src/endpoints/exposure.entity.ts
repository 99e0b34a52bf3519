import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { TimestampedRecord } from '../common/tracked-record';
import { Dataset } from '../datasets/dataset.entity';
import { User } from '../users/user.entity';
import { Endpoint } from './endpoint.entity';

/**
 * "Dataset D is published to endpoint E with access-request form F". Deprecation keeps the row
 * (deprecated_at set); `created_at` is exported as the release date.
 */
@Entity({ name: 'exposures' })
@Index('UQ_exposures_active_dataset_endpoint', ['dataset', 'endpoint'], {
  unique: true,
  where: '"deprecated_at" IS NULL',
})
@Index('IDX_exposures_endpoint', ['endpoint'])
@Index('IDX_exposures_dataset', ['dataset'])
@Index('IDX_exposures_withdrawn', ['deprecatedAt'], { where: '"deprecated_at" IS NOT NULL' })
export class Exposure extends TimestampedRecord {
  @ManyToOne(() => Dataset, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'dataset_id' })
  dataset!: Dataset;

  @ManyToOne(() => Endpoint, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'endpoint_id' })
  endpoint!: Endpoint;

  /** Access-request (REMS) form id. */
  @Column({ name: 'form_id', type: 'integer' })
  formId!: number;

  @Column({ name: 'form_name', type: 'varchar', length: 255, nullable: true })
  formName!: string | null;

  @Column({ name: 'request_pdf_enabled', type: 'boolean', default: false })
  requestPdfEnabled!: boolean;

  @ManyToOne(() => User, { nullable: true, onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by_id' })
  createdBy!: User | null;

  @Column({ name: 'deprecated_at', type: 'timestamptz', nullable: true })
  deprecatedAt!: Date | null;

  @Column({ name: 'deprecation_reason', type: 'text', nullable: true })
  deprecationReason!: string | null;
}
