import { Column, Entity, JoinTable, ManyToMany, OneToMany } from 'typeorm';
import { TrackedRecord } from '../common/tracked-record';
import { Contact } from '../contacts/contact.entity';
import { Term } from '../terms/term.entity';
import { User } from '../users/user.entity';
import { Publication } from './publication.entity';

@Entity({ name: 'projects' })
export class Project extends TrackedRecord {
  @Column({ type: 'varchar', length: 200, unique: true })
  acronym!: string;

  @Column({ type: 'varchar', length: 500, unique: true })
  title!: string;

  /** Lay summary, exported as `description`. */
  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ type: 'text', nullable: true })
  comments!: string | null;

  @Column({ name: 'has_institutional_ethics_approval', type: 'boolean', default: false })
  hasInstitutionalEthicsApproval!: boolean;

  @Column({ name: 'institutional_ethics_approval_notes', type: 'text', nullable: true })
  institutionalEthicsApprovalNotes!: string | null;

  @Column({ name: 'has_national_ethics_approval', type: 'boolean', default: false })
  hasNationalEthicsApproval!: boolean;

  @Column({ name: 'national_ethics_approval_notes', type: 'text', nullable: true })
  nationalEthicsApprovalNotes!: string | null;

  @Column({ name: 'start_date', type: 'date', nullable: true })
  startDate!: string | null;

  @Column({ name: 'end_date', type: 'date', nullable: true })
  endDate!: string | null;

  @Column({ name: 'web_page', type: 'text', nullable: true })
  webPage!: string | null;

  @ManyToMany(() => User)
  @JoinTable({
    name: 'project_local_custodians',
    joinColumn: { name: 'project_id' },
    inverseJoinColumn: { name: 'user_id' },
  })
  localCustodians!: User[];

  @ManyToMany(() => User)
  @JoinTable({
    name: 'project_company_personnel',
    joinColumn: { name: 'project_id' },
    inverseJoinColumn: { name: 'user_id' },
  })
  companyPersonnel!: User[];

  @ManyToMany(() => Contact)
  @JoinTable({
    name: 'project_contacts',
    joinColumn: { name: 'project_id' },
    inverseJoinColumn: { name: 'contact_id' },
  })
  contacts!: Contact[];

  @ManyToMany(() => Term)
  @JoinTable({
    name: 'project_terms',
    joinColumn: { name: 'project_id' },
    inverseJoinColumn: { name: 'term_id' },
  })
  terms!: Term[];

  @OneToMany(() => Publication, (publication) => publication.project)
  publications!: Publication[];
}
