import { ApiProperty } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsDefined, ValidateNested } from 'class-validator';
import { IntegerField, OneOfField, TextField } from '@app/platform';

/**
 * What the provisioner reports, as `<object type>.<action>`: a DRS access decision (allowed or
 * refused), bytes served, an import published. The trail stores each as its object type and
 * action, and webhooks carry the same name.
 */
export const REPORTED_EVENT_TYPES = [
  'drs_object.allow',
  'drs_object.refuse',
  'drs_object.serve',
  'import.publish',
] as const;
export type ReportedEventType = (typeof REPORTED_EVENT_TYPES)[number];

/** Events per report: one statement, a body well under the limit. */
export const REPORTED_EVENTS_MAX = 500;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})$/;

/** One event the provisioner saw; the trail chains it when it arrives. */
export class ReportedEventInput {
  @TextField({
    required: true,
    pattern: UUID,
    patternMessage: 'must be a lowercase UUID',
    description: 'The event id, chosen by the reporter: reporting it again records nothing new',
  })
  id!: string;

  @OneOfField(REPORTED_EVENT_TYPES, { required: true, description: 'What happened' })
  type!: ReportedEventType;

  @TextField({
    required: true,
    pattern: ISO_INSTANT,
    patternMessage: 'must be an ISO 8601 date-time with a zone',
    description: "When it happened, by the reporter's clock",
  })
  occurred_at!: string;

  @TextField({
    required: true,
    max: 255,
    nonEmpty: true,
    description: 'The object: a DRS object id, or an import id',
  })
  object_id!: string;

  @TextField({
    max: 255,
    nonEmpty: true,
    description: 'Who: the visa or token subject asking for the object',
  })
  subject?: string;

  @TextField({ max: 255, nonEmpty: true, description: "The dataset's accession, or its id" })
  dataset?: string;

  @TextField({ max: 255, nonEmpty: true, description: 'The visa that allowed it: its `jti`' })
  visa?: string;

  @TextField({ max: 2000, nonEmpty: true, description: 'Why it was refused' })
  reason?: string;

  @IntegerField({
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    description: 'First byte served (with `serve`)',
  })
  range_start?: number;

  @IntegerField({ min: 0, max: Number.MAX_SAFE_INTEGER, description: 'Bytes served' })
  bytes?: number;

  @TextField({ max: 2000, nonEmpty: true, description: 'Where an import was published' })
  location?: string;
}

/** `POST /api/trail/events`. */
export class ReportedEventsBody {
  @ApiProperty({ type: [ReportedEventInput], minItems: 1, maxItems: REPORTED_EVENTS_MAX })
  @IsDefined()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(REPORTED_EVENTS_MAX)
  @ValidateNested({ each: true })
  @Type(() => ReportedEventInput)
  events!: ReportedEventInput[];
}

export class ReportedEventsResult {
  @ApiProperty({ description: 'Events chained by this call' })
  recorded!: number;

  @ApiProperty({ description: 'Events already in the trail (reported before), left as they were' })
  already!: number;
}
