import { Check, Column, Entity, Index, PrimaryGeneratedColumn, Unique } from 'typeorm';
import type { TermCategory } from './term-category';

/**
 * One entry of a controlled vocabulary (disease, phenotype, study type, gene). Projects point
 * at terms by `id`; `term_id` is the ontology's own identifier (e.g. `DOID:14330`).
 */
@Entity({ name: 'terms' })
@Unique('UQ_terms_category_term_id', ['category', 'termId'])
@Check('CHK_terms_category', `"category" IN ('disease', 'phenotype', 'study', 'gene')`)
// The search indexes (trigram on label_lower; category + label_lower + id; the 1–2-character
// substrings of label_lower) are written by hand in the migrations: TypeORM cannot describe them.
@Index('IDX_terms_label_lower_trgm', { synchronize: false })
@Index('IDX_terms_category_label_lower', { synchronize: false })
@Index('IDX_terms_short_grams', { synchronize: false })
export class Term {
  @PrimaryGeneratedColumn({ type: 'integer', primaryKeyConstraintName: 'PK_terms' })
  id!: number;

  @Column({ type: 'text' })
  category!: TermCategory;

  @Column({ name: 'term_id', type: 'text' })
  termId!: string;

  @Column({ type: 'text' })
  label!: string;

  /** `lower(label)` in byte order, computed by Postgres on every write: what search compares. */
  @Column({
    name: 'label_lower',
    type: 'text',
    collation: 'C',
    generatedType: 'STORED',
    asExpression: 'lower("label")',
    insert: false,
    update: false,
  })
  readonly labelLower!: string;
}
