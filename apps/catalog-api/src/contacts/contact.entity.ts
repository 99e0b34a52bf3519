import { Column, Entity, JoinTable, ManyToMany } from 'typeorm';
import { TimestampedRecord } from '../common/tracked-record';
import { Partner } from '../partners/partner.entity';

export const CONTACT_TYPES = [
  'Researcher',
  'Principal_Investigator',
  'Data_Protection_Officer',
  'Data_Manager',
  'Legal_Representative',
  'Other',
] as const;
export type ContactType = (typeof CONTACT_TYPES)[number];

/** A person known to the catalog who is not (necessarily) a user of it. */
@Entity({ name: 'contacts' })
export class Contact extends TimestampedRecord {
  @Column({ name: 'first_name', type: 'varchar', length: 150 })
  firstName!: string;

  @Column({ name: 'last_name', type: 'varchar', length: 150 })
  lastName!: string;

  @Column({ type: 'varchar', length: 254, nullable: true })
  email!: string | null;

  @Column({ type: 'text', nullable: true })
  address!: string | null;

  @Column({ type: 'varchar', length: 50, nullable: true })
  phone!: string | null;

  /** Subject at the identity provider. */
  @Column({ name: 'oidc_id', type: 'varchar', length: 64, nullable: true, unique: true })
  oidcId!: string | null;

  @Column({ type: 'enum', enum: CONTACT_TYPES, enumName: 'contact_type', default: 'Other' })
  type!: ContactType;

  @ManyToMany(() => Partner)
  @JoinTable({
    name: 'contact_partners',
    joinColumn: { name: 'contact_id' },
    inverseJoinColumn: { name: 'partner_id' },
  })
  partners!: Partner[];
}
