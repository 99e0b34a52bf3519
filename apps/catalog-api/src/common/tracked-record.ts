import { Column, CreateDateColumn, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';

/** Name of the Postgres sequence behind every `ELU_I_<n>` accession. */
export const ACCESSION_SEQUENCE = 'elu_accession_seq';

/**
 * Columns shared by the records the catalog exports with an accession (projects, datasets,
 * partners, cohorts). The accession default lives in the database so that every insert path
 * (API, imports, demo data, bulk SQL) gets one, and the unique constraint is enforced there.
 */
export abstract class TrackedRecord {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({
    name: 'elu_accession',
    type: 'varchar',
    length: 20,
    nullable: true,
    unique: true,
    // Spelled as Postgres reports it back, so migration:generate sees no drift.
    default: () => `('ELU_I_'|| nextval('${ACCESSION_SEQUENCE}'))`,
  })
  eluAccession!: string | null;

  /** A JSON-encoded object, exported verbatim as `metadata` (clients JSON-parse it). */
  @Column({ name: 'metadata', type: 'text', default: '{}' })
  metadata!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}

/** Audit timestamps for records without an accession. */
export abstract class TimestampedRecord {
  @PrimaryGeneratedColumn()
  id!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
