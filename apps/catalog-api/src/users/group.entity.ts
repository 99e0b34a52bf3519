import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** Groups whose members hold `protected` on every dataset, project and contract. */
export const GLOBAL_PROTECTED_GROUPS = ['data-steward', 'auditor'] as const;

@Entity({ name: 'groups' })
export class Group {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 150, unique: true })
  name!: string;
}
