import {
  Column,
  Entity,
  Generated,
  Index,
  JoinColumn,
  JoinTable,
  ManyToMany,
  ManyToOne,
  OneToMany,
} from 'typeorm';
import { TrackedRecord } from '../common/tracked-record';
import { Project } from '../projects/project.entity';
import { User } from '../users/user.entity';
import { DataDeclaration } from './data-declaration.entity';

@Entity({ name: 'datasets' })
@Index('IDX_datasets_project', ['project'])
export class Dataset extends TrackedRecord {
  @Column({ type: 'varchar', length: 255, unique: true })
  title!: string;

  @Column({ type: 'text', nullable: true })
  description!: string | null;

  @Column({ name: 'elu_uuid', type: 'uuid', unique: true })
  @Generated('uuid')
  eluUuid!: string;

  @Column({ name: 'other_external_id', type: 'varchar', length: 255, nullable: true })
  otherExternalId!: string | null;

  /**
   * Tag it `ejp:vpConnection ejp:VPDiscoverable` in the FAIR Data Point, for the EJP RD Virtual
   * Platform (besides the catalog-wide FDP_VP_DISCOVERABLE).
   */
  @Column({ name: 'vp_discoverable', type: 'boolean', default: false })
  vpDiscoverable!: boolean;

  @ManyToOne(() => Project, { nullable: true, onDelete: 'SET NULL' })
  @JoinColumn({ name: 'project_id' })
  project!: Project | null;

  @ManyToMany(() => User)
  @JoinTable({
    name: 'dataset_local_custodians',
    joinColumn: { name: 'dataset_id' },
    inverseJoinColumn: { name: 'user_id' },
  })
  localCustodians!: User[];

  @OneToMany(() => DataDeclaration, (declaration) => declaration.dataset)
  dataDeclarations!: DataDeclaration[];
}
