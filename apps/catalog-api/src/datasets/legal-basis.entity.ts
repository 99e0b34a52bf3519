import { Column, Entity, Index, JoinColumn, JoinTable, ManyToMany, ManyToOne } from 'typeorm';
import { TimestampedRecord } from '../common/tracked-record';
import { DataDeclaration } from './data-declaration.entity';
import { Dataset } from './dataset.entity';

/** GDPR art. 6.1 lawful bases. */
export const LEGAL_BASIS_CODES = [
  '6.1(a)',
  '6.1(b)',
  '6.1(c)',
  '6.1(d)',
  '6.1(e)',
  '6.1(f)',
] as const;
export type LegalBasisCode = (typeof LEGAL_BASIS_CODES)[number];

export const PERSONAL_DATA_CODES = [
  'Standard',
  'Special',
  'Race',
  'Genetic',
  'Biometric',
  'Health',
  'Sexual orientation',
  'Convictions',
  'Other',
] as const;
export type PersonalDataCode = (typeof PERSONAL_DATA_CODES)[number];

@Entity({ name: 'legal_bases' })
@Index('IDX_legal_bases_dataset', ['dataset'])
export class LegalBasis extends TimestampedRecord {
  @ManyToOne(() => Dataset, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'dataset_id' })
  dataset!: Dataset;

  @Column({
    name: 'legal_basis_codes',
    type: 'enum',
    enum: LEGAL_BASIS_CODES,
    enumName: 'legal_basis_code',
    array: true,
    default: () => "'{}'",
  })
  legalBasisCodes!: LegalBasisCode[];

  @Column({
    name: 'personal_data_codes',
    type: 'enum',
    enum: PERSONAL_DATA_CODES,
    enumName: 'personal_data_code',
    array: true,
    default: () => "'{}'",
  })
  personalDataCodes!: PersonalDataCode[];

  @Column({ name: 'legal_basis_notes', type: 'text', nullable: true })
  legalBasisNotes!: string | null;

  /** Declarations this basis covers; none means the whole dataset. */
  @ManyToMany(() => DataDeclaration)
  @JoinTable({
    name: 'legal_basis_data_declarations',
    joinColumn: { name: 'legal_basis_id' },
    inverseJoinColumn: { name: 'data_declaration_id' },
  })
  dataDeclarations!: DataDeclaration[];
}
