import { Column, Entity } from 'typeorm';
import { TimestampedRecord } from '../common/tracked-record';

/** An external data catalog that pulls what is exposed to it, with its own 64-character key. */
@Entity({ name: 'endpoints' })
export class Endpoint extends TimestampedRecord {
  @Column({ type: 'varchar', length: 150, unique: true })
  name!: string;

  /** Public URL of a record at the endpoint; contains `${entity_id}`. */
  @Column({ name: 'url_pattern', type: 'text' })
  urlPattern!: string;

  /** SHA-256 (hex) of the endpoint key; the key itself is shown once and never stored. */
  @Column({ name: 'api_key_hash', type: 'char', length: 64, unique: true })
  apiKeyHash!: string;
}
