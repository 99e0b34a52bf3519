import { Check, Column, Entity, Index, JoinColumn, ManyToOne } from 'typeorm';
import { TimestampedRecord } from '../common/tracked-record';
import { Dataset } from './dataset.entity';

export const STORAGE_CATEGORIES = ['master', 'backup', 'copy'] as const;
export type StorageCategory = (typeof STORAGE_CATEGORIES)[number];

/**
 * One row per (dataset, platform, location): a unique index on the location's SHA-256
 * (`storage_location_digest`, migration StorageLocationDigest), so a location of any length fits.
 */
@Entity({ name: 'storage_locations' })
@Index('IDX_storage_locations_dataset', ['dataset'])
@Check('CHK_storage_locations_byte_size', `"byte_size" >= 0`)
@Check('CHK_storage_locations_manifest_sha256', `"manifest_sha256" ~ '^[0-9a-f]{64}$'`)
@Check('CHK_storage_locations_drs_uri', `"drs_uri" ~ '^drs://'`)
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

  /**
   * The copy's total bytes, as the provisioner registered it; null when not registered. A bigint
   * (TypeORM reads it as a string); values stay within Number.MAX_SAFE_INTEGER (the route's bound).
   */
  @Column({ name: 'byte_size', type: 'bigint', nullable: true })
  byteSize!: string | null;

  /** SHA-256 (lowercase hex) of the copy's stored manifest of per-file SHA-256s; null when not registered. */
  @Column({ name: 'manifest_sha256', type: 'character', length: 64, nullable: true })
  manifestSha256!: string | null;

  /** The copy as a GA4GH DRS object (`drs://host/id`), as the provisioner registered it. */
  @Column({ name: 'drs_uri', type: 'varchar', length: 2000, nullable: true })
  drsUri!: string | null;
}
