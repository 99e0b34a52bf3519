import { Column, Entity, JoinTable, ManyToMany } from 'typeorm';
import { TrackedRecord } from '../common/tracked-record';
import { Contact } from '../contacts/contact.entity';
import { Partner } from '../partners/partner.entity';

@Entity({ name: 'cohorts' })
export class Cohort extends TrackedRecord {
  @Column({ type: 'varchar', length: 255, unique: true })
  name!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ type: 'text', nullable: true })
  url!: string | null;

  @Column({ name: 'has_ethics_approval', type: 'boolean', default: true })
  hasEthicsApproval!: boolean;

  @Column({ name: 'ethics_approval_notes', type: 'text', nullable: true })
  ethicsApprovalNotes!: string | null;

  @Column({ name: 'is_published', type: 'boolean', default: false })
  isPublished!: boolean;

  @ManyToMany(() => Contact)
  @JoinTable({
    name: 'cohort_owners',
    joinColumn: { name: 'cohort_id' },
    inverseJoinColumn: { name: 'contact_id' },
  })
  owners!: Contact[];

  @ManyToMany(() => Partner)
  @JoinTable({
    name: 'cohort_institutes',
    joinColumn: { name: 'cohort_id' },
    inverseJoinColumn: { name: 'partner_id' },
  })
  institutes!: Partner[];
}
