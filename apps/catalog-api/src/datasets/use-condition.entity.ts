import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import { DataDeclaration } from './data-declaration.entity';
import {
  USE_CLASSES,
  USE_CONDITION_RULES,
  type UseClass,
  type UseConditionRule,
} from './use-condition-codes';

@Entity({ name: 'use_conditions' })
@Index('IDX_use_conditions_declaration', ['dataDeclaration'])
export class UseCondition {
  @PrimaryGeneratedColumn()
  id!: number;

  @ManyToOne(() => DataDeclaration, (declaration) => declaration.useConditions, {
    nullable: false,
    onDelete: 'CASCADE',
  })
  @JoinColumn({ name: 'data_declaration_id' })
  dataDeclaration!: DataDeclaration;

  @Column({ name: 'use_class', type: 'enum', enum: USE_CLASSES, enumName: 'use_class' })
  useClass!: UseClass;

  @Column({ name: 'use_class_note', type: 'text', nullable: true })
  useClassNote!: string | null;

  @Column({ name: 'use_condition_note', type: 'text', nullable: true })
  useConditionNote!: string | null;

  @Column({
    name: 'use_condition_rule',
    type: 'enum',
    enum: USE_CONDITION_RULES,
    enumName: 'use_condition_rule',
    default: 'PROHIBITION',
  })
  useConditionRule!: UseConditionRule;
}
