import {
  Column,
  Entity,
  JoinColumn,
  JoinTable,
  ManyToMany,
  ManyToOne,
  OneToMany,
  Unique,
} from 'typeorm';
import { Cohort } from '../cohorts/cohort.entity';
import { TimestampedRecord } from '../common/tracked-record';
import { Contract } from '../contracts/contract.entity';
import { Partner } from '../partners/partner.entity';
import { Dataset } from './dataset.entity';
import { UseCondition } from './use-condition.entity';

export const ACCESS_CATEGORIES = ['open_access', 'registered_access', 'controlled_access'] as const;
export type AccessCategory = (typeof ACCESS_CATEGORIES)[number];

export const SUBJECTS_CATEGORIES = ['unknown', 'cases', 'controls', 'cases_and_controls'] as const;
export type SubjectsCategory = (typeof SUBJECTS_CATEGORIES)[number];

export const DE_IDENTIFICATION_METHODS = ['anonymization', 'pseudonymization'] as const;
export type DeIdentificationMethod = (typeof DE_IDENTIFICATION_METHODS)[number];

/** Null stands for "unknown", which the export also renders as null. */
export const CONSENT_STATUSES = ['heterogeneous', 'homogeneous'] as const;
export type ConsentStatus = (typeof CONSENT_STATUSES)[number];

@Entity({ name: 'data_declarations' })
@Unique('UQ_data_declarations_dataset_title', ['dataset', 'title'])
export class DataDeclaration extends TimestampedRecord {
  @ManyToOne(() => Dataset, (dataset) => dataset.dataDeclarations, {
    nullable: false,
    onDelete: 'CASCADE',
  })
  @JoinColumn({ name: 'dataset_id' })
  dataset!: Dataset;

  @Column({ type: 'varchar', length: 255 })
  title!: string;

  /** Data-type names (ELU vocabulary); stored as a set, exported sorted. */
  @Column({ name: 'data_types', type: 'text', array: true, default: () => "'{}'" })
  dataTypes!: string[];

  @Column({ name: 'data_types_notes', type: 'text', nullable: true })
  dataTypesNotes!: string | null;

  @Column({
    name: 'access_category',
    type: 'enum',
    enum: ACCESS_CATEGORIES,
    enumName: 'access_category',
    nullable: true,
  })
  accessCategory!: AccessCategory | null;

  @Column({ name: 'access_procedure', type: 'text', nullable: true })
  accessProcedure!: string | null;

  @Column({
    name: 'subjects_category',
    type: 'enum',
    enum: SUBJECTS_CATEGORIES,
    enumName: 'subjects_category',
    default: 'cases_and_controls',
  })
  subjectsCategory!: SubjectsCategory;

  @Column({
    name: 'de_identification',
    type: 'enum',
    enum: DE_IDENTIFICATION_METHODS,
    enumName: 'de_identification_method',
    default: 'pseudonymization',
  })
  deIdentification!: DeIdentificationMethod;

  @Column({
    name: 'consent_status',
    type: 'enum',
    enum: CONSENT_STATUSES,
    enumName: 'consent_status',
    nullable: true,
  })
  consentStatus!: ConsentStatus | null;

  @Column({ name: 'has_special_subjects', type: 'boolean', nullable: true })
  hasSpecialSubjects!: boolean | null;

  @Column({ name: 'special_subjects_description', type: 'text', nullable: true })
  specialSubjectsDescription!: string | null;

  @Column({ name: 'embargo_date', type: 'date', nullable: true })
  embargoDate!: string | null;

  @Column({ name: 'storage_end_date', type: 'date', nullable: true })
  storageEndDate!: string | null;

  @Column({ name: 'storage_duration_criteria', type: 'text', nullable: true })
  storageDurationCriteria!: string | null;

  /** The institution the data comes from. */
  @ManyToOne(() => Partner, { nullable: true, onDelete: 'SET NULL' })
  @JoinColumn({ name: 'partner_id' })
  partner!: Partner | null;

  @ManyToOne(() => Contract, { nullable: true, onDelete: 'SET NULL' })
  @JoinColumn({ name: 'contract_id' })
  contract!: Contract | null;

  @ManyToMany(() => Cohort)
  @JoinTable({
    name: 'data_declaration_cohorts',
    joinColumn: { name: 'data_declaration_id' },
    inverseJoinColumn: { name: 'cohort_id' },
  })
  cohorts!: Cohort[];

  @OneToMany(() => UseCondition, (condition) => condition.dataDeclaration)
  useConditions!: UseCondition[];
}
