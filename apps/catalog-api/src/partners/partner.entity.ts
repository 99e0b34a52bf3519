import { Check, Column, Entity } from 'typeorm';
import { TrackedRecord } from '../common/tracked-record';

export const GEO_CATEGORIES = ['EU', 'Non_EU', 'International', 'National'] as const;
export type GeoCategory = (typeof GEO_CATEGORIES)[number];

export const SECTOR_CATEGORIES = ['PUBLIC', 'PRIVATE_NP', 'PRIVATE_P'] as const;
export type SectorCategory = (typeof SECTOR_CATEGORIES)[number];

@Entity({ name: 'partners' })
@Check('CHK_partners_country_code', `"country_code" ~ '^[A-Z]{2}$'`)
export class Partner extends TrackedRecord {
  @Column({ type: 'varchar', length: 255, unique: true })
  name!: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  acronym!: string | null;

  @Column({ type: 'text', nullable: true })
  address!: string | null;

  /** ISO 3166-1 alpha-2, as the ELU institution schema requires (the reference emitted IOC codes). */
  @Column({ name: 'country_code', type: 'char', length: 2, nullable: true })
  countryCode!: string | null;

  @Column({
    name: 'geo_category',
    type: 'enum',
    enum: GEO_CATEGORIES,
    enumName: 'geo_category',
    nullable: true,
  })
  geoCategory!: GeoCategory | null;

  @Column({
    name: 'sector_category',
    type: 'enum',
    enum: SECTOR_CATEGORIES,
    enumName: 'sector_category',
    nullable: true,
  })
  sectorCategory!: SectorCategory | null;

  @Column({ name: 'is_clinical', type: 'boolean', default: false })
  isClinical!: boolean;

  @Column({ name: 'is_published', type: 'boolean', default: false })
  isPublished!: boolean;
}
