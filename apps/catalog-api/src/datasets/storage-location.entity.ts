import { Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { TimestampedRecord } from '../common/tracked-record';
import { Dataset } from './dataset.entity';

export const STORAGE_CATEGORIES = ['master', 'backup', 'copy'] as const;
export type StorageCategory = (typeof STORAGE_CATEGORIES)[number];

/** One row per (dataset, platform, location): a unique index on the migration's expression. */
@Entity({ name: 'storage_locations' })
@Index('IDX_storage_locations_dataset', ['dataset'])
export class StorageLocation extends TimestampedRecord {
  @ManyToOne(() => Dataset, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'dataset_id' })
  dataset!: Dataset;

  /** Name of the storage platform (e.g. an HPC file system or an application). */
  @Column({ type: 'varchar', length: 255 })
  platform!: string;

  @Column({
    type: 'enum',
    enum: STORAGE_CATEGORIES,
    enumName: 'storage_category',
    default: 'master',
  })
  category!: StorageCategory;

  @Column({ type: 'text', nullable: true })
  location!: string | null;
}
