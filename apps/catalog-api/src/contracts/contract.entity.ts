import {
  Column,
  Entity,
  Index,
  JoinColumn,
  JoinTable,
  ManyToMany,
  ManyToOne,
  OneToMany,
} from 'typeorm';
import { TimestampedRecord } from '../common/tracked-record';
import { Project } from '../projects/project.entity';
import { User } from '../users/user.entity';
import { ContractPartnerRole } from './contract-partner-role.entity';

@Entity({ name: 'contracts' })
@Index('IDX_contracts_project', ['project'])
export class Contract extends TimestampedRecord {
  @Column({ type: 'varchar', length: 255, nullable: true })
  name!: string | null;

  @Column({ type: 'text', nullable: true })
  comments!: string | null;

  @ManyToOne(() => Project, { nullable: true, onDelete: 'SET NULL' })
  @JoinColumn({ name: 'project_id' })
  project!: Project | null;

  @ManyToMany(() => User)
  @JoinTable({
    name: 'contract_local_custodians',
    joinColumn: { name: 'contract_id' },
    inverseJoinColumn: { name: 'user_id' },
  })
  localCustodians!: User[];

  @OneToMany(() => ContractPartnerRole, (role) => role.contract)
  partnerRoles!: ContractPartnerRole[];
}
