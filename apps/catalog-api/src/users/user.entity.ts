import { Column, Entity, Index, JoinColumn, JoinTable, ManyToMany, ManyToOne } from 'typeorm';
import { TimestampedRecord } from '../common/tracked-record';
import { Partner } from '../partners/partner.entity';
import { Group } from './group.entity';

@Entity({ name: 'users' })
@Index('IDX_users_affiliation', ['affiliation'])
export class User extends TimestampedRecord {
  @Column({ type: 'varchar', length: 150, unique: true })
  username!: string;

  @Column({ name: 'first_name', type: 'varchar', length: 150, default: '' })
  firstName!: string;

  @Column({ name: 'last_name', type: 'varchar', length: 150, default: '' })
  lastName!: string;

  @Column({ type: 'varchar', length: 254, nullable: true })
  email!: string | null;

  /** Subject at the identity provider. */
  @Column({ name: 'oidc_id', type: 'varchar', length: 64, nullable: true, unique: true })
  oidcId!: string | null;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive!: boolean;

  /** SHA-256 (hex) of the personal API key; the key itself is shown once and never stored. */
  @Column({ name: 'api_key_hash', type: 'char', length: 64, nullable: true, unique: true })
  apiKeyHash!: string | null;

  /** The institution exported as the person's affiliation. */
  @ManyToOne(() => Partner, { nullable: true, onDelete: 'SET NULL' })
  @JoinColumn({ name: 'affiliation_id' })
  affiliation!: Partner | null;

  @ManyToMany(() => Group)
  @JoinTable({
    name: 'user_groups',
    joinColumn: { name: 'user_id' },
    inverseJoinColumn: { name: 'group_id' },
  })
  groups!: Group[];
}
