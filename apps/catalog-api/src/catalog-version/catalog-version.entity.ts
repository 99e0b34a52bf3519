import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * One row holding the catalog's data version. Statement-level triggers on every catalog table
 * increment it, so any write (API, import, SQL console) invalidates cached responses on every
 * replica.
 */
@Entity({ name: 'catalog_version' })
@Check('CHK_catalog_version_single_row', `"id" = 1`)
export class CatalogVersion {
  @PrimaryColumn({ type: 'smallint', default: 1 })
  id!: number;

  @Column({ type: 'bigint', default: 1 })
  version!: string;
}
