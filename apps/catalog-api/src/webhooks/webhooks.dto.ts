import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { PositiveIntParam, TextField, TextListField } from '@app/platform';
import { Count } from '../common/response-properties';

/** `<object type>.<action>`, as the trail names its entries (docs/events/). */
const EVENT_TYPE = /^[a-z_]+\.[a-z_-]+$/;
/** Standard Webhooks' secret: `whsec_` and 24 to 64 random bytes in base64. */
export const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/]{32,88}={0,2}$/;

export class SubscriptionIdParams {
  @PositiveIntParam('The subscription id', true)
  id!: number;
}

export class CreateSubscriptionBody {
  @TextField({
    required: true,
    nonEmpty: true,
    max: 2000,
    pattern: /^https?:\/\/[^\s]+$/,
    patternMessage: 'must be an https URL (http only where WEBHOOK_ALLOW_HTTP is on)',
    description: 'Where each message is POSTed',
  })
  url!: string;

  @TextListField(
    {
      nonEmpty: true,
      max: 64,
      pattern: EVENT_TYPE,
      patternMessage: 'must be an event type such as access.grant',
    },
    { max: 100, description: 'Event types to receive (docs/events/); absent: every one' },
  )
  events?: string[];

  @TextField({
    pattern: WEBHOOK_SECRET,
    patternMessage: 'must be a Standard Webhooks secret: whsec_ and base64 of 24 to 64 bytes',
    description: 'Signing secret; absent: one is made and shown once in the answer',
  })
  secret?: string;
}

export class ReplayBody {
  @TextListField(
    { nonEmpty: true, max: 20, pattern: /^\d+$/, patternMessage: 'must be a delivery id' },
    { max: 1000, description: 'Dead letters to send again; absent: all of them' },
  )
  ids?: string[];
}

export class SubscriptionView {
  @ApiProperty()
  id!: number;

  @ApiProperty()
  url!: string;

  @ApiProperty({ type: [String], nullable: true, description: 'null: every event type' })
  events!: string[] | null;

  @ApiProperty({ description: 'ISO 8601' })
  created_at!: string;

  @ApiPropertyOptional({ description: 'Only in the answer that created it' })
  secret?: string;
}

export class DeadLetterView {
  @ApiProperty({ description: 'The delivery id (for a replay of some)' })
  id!: string;

  @ApiProperty({ description: 'The trail position of the event' })
  seq!: string;

  @ApiProperty()
  subject!: string;

  @ApiProperty()
  attempts!: number;

  @ApiProperty({ nullable: true })
  last_error!: string | null;
}

export class SubscriptionList {
  @ApiProperty({ type: [SubscriptionView] })
  results!: SubscriptionView[];
}

export class DeadLetterList {
  @ApiProperty({ type: [DeadLetterView], description: 'Oldest first, at most 1,000' })
  results!: DeadLetterView[];
}

/** The answer of a replay: how many dead letters were queued again. */
export class ReplayedDeadLetters {
  @Count() replayed!: number;
}
