import {
  Column,
  Entity,
  JoinColumn,
  JoinTable,
  ManyToMany,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
} from 'typeorm';
import { Contact } from '../contacts/contact.entity';
import { Partner } from '../partners/partner.entity';
import { Contract } from './contract.entity';

export const GDPR_ROLES = ['controller', 'joint_controller', 'processor'] as const;
export type GdprRole = (typeof GDPR_ROLES)[number];

/** What one partner is to a contract, in GDPR terms. */
@Entity({ name: 'contract_partner_roles' })
@Unique('UQ_contract_partner_roles_contract_partner', ['contract', 'partner'])
export class ContractPartnerRole {
  @PrimaryGeneratedColumn()
  id!: number;

  @ManyToOne(() => Contract, (contract) => contract.partnerRoles, {
    nullable: false,
    onDelete: 'CASCADE',
  })
  @JoinColumn({ name: 'contract_id' })
  contract!: Contract;

  @ManyToOne(() => Partner, { nullable: false, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'partner_id' })
  partner!: Partner;

  @Column({
    name: 'gdpr_roles',
    type: 'enum',
    enum: GDPR_ROLES,
    enumName: 'gdpr_role',
    array: true,
    default: () => "'{}'",
  })
  gdprRoles!: GdprRole[];

  @Column({ type: 'text', nullable: true })
  comments!: string | null;

  @ManyToMany(() => Contact)
  @JoinTable({
    name: 'contract_partner_role_contacts',
    joinColumn: { name: 'contract_partner_role_id' },
    inverseJoinColumn: { name: 'contact_id' },
  })
  contacts!: Contact[];
}
