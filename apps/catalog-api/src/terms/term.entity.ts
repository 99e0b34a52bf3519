import { Check, Column, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import type { TermCategory } from './term-category';

/**
 * One entry of a controlled vocabulary (disease, phenotype, study type, gene). Projects point
 * at terms by `id`; `term_id` is the ontology's own identifier (e.g. `DOID:14330`).
 */
@Entity({ name: 'terms' })
@Unique('UQ_terms_category_term_id', ['category', 'termId'])
@Check('CHK_terms_category', `"category" IN ('disease', 'phenotype', 'study', 'gene')`)
// Expression indexes for the search (trigram on lower(label); category + lower(label) in "C"
// order) are written by hand in the migration: TypeORM cannot describe them.
@Index('IDX_terms_label_trgm', { synchronize: false })
@Index('IDX_terms_category_label', { synchronize: false })
export class Term {
  @PrimaryGeneratedColumn({ type: 'integer', primaryKeyConstraintName: 'PK_terms' })
  id!: number;

  @Column({ type: 'text' })
  category!: TermCategory;

  @Column({ name: 'term_id', type: 'text' })
  termId!: string;

  @Column({ type: 'text' })
  label!: string;
}
