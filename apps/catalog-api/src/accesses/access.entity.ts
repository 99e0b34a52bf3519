import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  JoinTable,
  ManyToMany,
  ManyToOne,
  Unique,
} from 'typeorm';
import { TimestampedRecord } from '../common/tracked-record';
import { Contact } from '../contacts/contact.entity';
import { Dataset } from '../datasets/dataset.entity';
import { StorageLocation } from '../datasets/storage-location.entity';
import { Project } from '../projects/project.entity';
import { User } from '../users/user.entity';

export const ACCESS_STATUSES = ['precreated', 'active', 'suspended', 'terminated'] as const;
export type AccessStatus = (typeof ACCESS_STATUSES)[number];

/** A person's (user's or contact's) access to a dataset, e.g. granted through REMS. */
@Entity({ name: 'accesses' })
@Check('CHK_accesses_one_holder', `"user_id" IS NULL OR "contact_id" IS NULL`)
@Index('IDX_accesses_dataset', ['dataset'])
@Index('IDX_accesses_user', ['user'])
@Index('IDX_accesses_contact', ['contact'])
@Index('IDX_accesses_open_expiry', ['grantExpiresOn'], { where: `"status" <> 'terminated'` })
// The webhook's idempotency key: a retried or concurrent delivery finds (or waits for) this row.
@Unique('UQ_accesses_request', ['applicationId', 'dataset', 'requestSubject'])
export class Access extends TimestampedRecord {
  @ManyToOne(() => Dataset, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'dataset_id' })
  dataset!: Dataset;

  @ManyToOne(() => User, { nullable: true, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user!: User | null;

  @ManyToOne(() => Contact, { nullable: true, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'contact_id' })
  contact!: Contact | null;

  @Column({
    type: 'enum',
    enum: ACCESS_STATUSES,
    enumName: 'access_status',
    default: 'precreated',
  })
  status!: AccessStatus;

  @Column({ name: 'granted_on', type: 'date', nullable: true })
  grantedOn!: string | null;

  /** Last day of access (inclusive); null = no expiry. */
  @Column({ name: 'grant_expires_on', type: 'date', nullable: true })
  grantExpiresOn!: string | null;

  @Column({ name: 'access_notes', type: 'text', default: '' })
  accessNotes!: string;

  /** The project in whose scope the access was given. */
  @ManyToOne(() => Project, { nullable: true, onDelete: 'SET NULL' })
  @JoinColumn({ name: 'project_id' })
  project!: Project | null;

  @ManyToOne(() => User, { nullable: true, onDelete: 'SET NULL' })
  @JoinColumn({ name: 'created_by_id' })
  createdBy!: User | null;

  @Column({ name: 'was_generated_automatically', type: 'boolean', default: false })
  wasGeneratedAutomatically!: boolean;

  /** Access-request (REMS) application id and its external id. */
  @Column({ name: 'application_id', type: 'integer', nullable: true })
  applicationId!: number | null;

  @Column({ name: 'application_external_id', type: 'varchar', length: 200, nullable: true })
  applicationExternalId!: string | null;

  /** Identity-provider subject named by the access request (REMS `user`); null for manual ones. */
  @Column({ name: 'request_subject', type: 'varchar', length: 64, nullable: true })
  requestSubject!: string | null;

  @ManyToMany(() => StorageLocation)
  @JoinTable({
    name: 'access_storage_locations',
    joinColumn: { name: 'access_id' },
    inverseJoinColumn: { name: 'storage_location_id' },
  })
  storageLocations!: StorageLocation[];
}
