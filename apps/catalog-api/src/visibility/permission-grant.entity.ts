import {
  Check,
  Column,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  CreateDateColumn,
} from 'typeorm';
import { Group } from '../users/group.entity';
import { User } from '../users/user.entity';

export const GRANTABLE_PERMISSIONS = ['protected'] as const;
export type GrantablePermission = (typeof GRANTABLE_PERMISSIONS)[number];

export const GRANT_OBJECT_TYPES = ['dataset', 'project', 'contract'] as const;
export type GrantObjectType = (typeof GRANT_OBJECT_TYPES)[number];

/**
 * An object-level permission held by a user or a group. The object is polymorphic
 * (type + id), so there is no foreign key to it: deleting an object leaves orphan grants that
 * match nothing; writers delete them with the object.
 */
@Entity({ name: 'permission_grants' })
@Check('CHK_permission_grants_one_holder', `("user_id" IS NULL) <> ("group_id" IS NULL)`)
@Index('UQ_permission_grants_user', ['user', 'permission', 'objectType', 'objectId'], {
  unique: true,
  where: '"user_id" IS NOT NULL',
})
@Index('UQ_permission_grants_group', ['group', 'permission', 'objectType', 'objectId'], {
  unique: true,
  where: '"group_id" IS NOT NULL',
})
@Index('IDX_permission_grants_object', ['objectType', 'objectId'])
export class PermissionGrant {
  @PrimaryGeneratedColumn()
  id!: number;

  @ManyToOne(() => User, { nullable: true, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'user_id' })
  user!: User | null;

  @ManyToOne(() => Group, { nullable: true, onDelete: 'CASCADE' })
  @JoinColumn({ name: 'group_id' })
  group!: Group | null;

  @Column({
    type: 'enum',
    enum: GRANTABLE_PERMISSIONS,
    enumName: 'grantable_permission',
    default: 'protected',
  })
  permission!: GrantablePermission;

  @Column({
    name: 'object_type',
    type: 'enum',
    enum: GRANT_OBJECT_TYPES,
    enumName: 'grant_object_type',
  })
  objectType!: GrantObjectType;

  @Column({ name: 'object_id', type: 'integer' })
  objectId!: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
