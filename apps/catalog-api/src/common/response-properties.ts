import type { Type } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';

/**
 * Property decorators of the response DTOs, which only document (the exporters build the
 * answers). Every property is required unless given `required: false`: the contract's records
 * always carry all their keys (§3: null when empty).
 */
type Options = ApiPropertyOptions;

export const Int = (o: Options = {}) => ApiProperty({ type: 'integer', ...o } as Options);
export const Count = () => Int({ minimum: 0 });
export const Bool = (o: Options = {}) => ApiProperty({ type: Boolean, ...o } as Options);
export const Text = (o: Options = {}) => ApiProperty({ type: String, ...o } as Options);
export const TextOrNull = (o: Options = {}) => Text({ nullable: true, ...o } as Options);
export const Texts = (o: Options = {}) => ApiProperty({ type: [String], ...o } as Options);
export const DateOrNull = () => Text({ format: 'date', nullable: true });
export const TimestampOrNull = () => Text({ format: 'date-time', nullable: true });
export const OneOf = (values: readonly (string | null)[], o: Options = {}) =>
  ApiProperty({ type: String, enum: [...values], ...o } as Options);
export const OneOfOrNull = (values: readonly string[], o: Options = {}) =>
  OneOf([...values, null], { nullable: true, ...o });
export const ListOf = (type: Type<unknown>, o: Options = {}) =>
  ApiProperty({ type: [type], ...o } as Options);
export const One = (type: Type<unknown>, o: Options = {}) => ApiProperty({ type, ...o } as Options);

/** `{"status": "Success", ...counts}`: subclasses add their counts. */
export class SuccessStatus {
  @OneOf(['Success'])
  status!: 'Success';
}

export class ImportAnswer extends SuccessStatus {
  @Count() created!: number;
  @Count() updated!: number;
}

export class EntitlementAnswer extends ImportAnswer {
  @Count() unchanged!: number;
}

export class SyncAnswer extends EntitlementAnswer {
  @Count() skipped!: number;
}

export class Pagination {
  @Bool({ description: 'Another page follows' })
  more!: boolean;
}

/** The keys every exported record carries. */
export const Source = (o: Options = {}) =>
  Text({
    format: 'uri',
    description: 'The public base URL of this catalog (CATALOG_SOURCE)',
    ...o,
  });
export const IdAtSource = (o: Options = {}) =>
  Text({ description: 'The database id', example: '12', ...o });
export const Accession = (o: Options = {}) =>
  TextOrNull({ description: 'Accession', example: 'ELU_I_131', ...o });
export const Metadata = (o: Options = {}) =>
  Text({ description: 'A JSON-encoded object (default `"{}"`)', example: '{}', ...o });

/** The keys that open a cohort or a dataset export record, in their order. */
export class DescribedRecord {
  @Source() source!: string;
  @IdAtSource() id_at_source!: string;
  @Accession() external_id!: string | null;
  @Text() name!: string;
  @TextOrNull() description!: string | null;
}
