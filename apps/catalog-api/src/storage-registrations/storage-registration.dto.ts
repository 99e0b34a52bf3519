import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsDefined,
  IsISO8601,
  IsOptional,
  IsString,
  Length,
  Matches,
  ValidateNested,
} from 'class-validator';
import { IntegerField, TextField } from '@app/platform';

const ACCESSION = /^ELU_I_\d{1,15}$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
/** `drs://<host>/<id>`, the id in the characters DRS ids keep unencoded. */
const DRS_URI = /^drs:\/\/[A-Za-z0-9.-]+(:\d+)?\/[A-Za-z0-9._~-]+$/;

/** A required, non-empty string of at most `max` characters, documented as such. */
const Text = (description: string, max: number) =>
  applyDecorators(
    ApiProperty({ description, minLength: 1, maxLength: max }),
    IsString(),
    Length(1, max),
  );

/** Which catalog dataset the copy belongs to. */
export class RegisteredDatasetInput {
  @ApiPropertyOptional({
    description: 'The dataset accession, when the source names one; it wins over the title',
    example: 'ELU_I_131',
    pattern: ACCESSION.source,
  })
  @IsOptional()
  @Matches(ACCESSION, { message: 'accession must be an accession such as ELU_I_131' })
  accession?: string;

  @Text('Dataset title (found, or created, in the project)', 255)
  title!: string;

  @Text("Acronym of the submission's catalog project", 200)
  project!: string;
}

/** The storage copy: one row per (dataset, platform, location). */
export class RegisteredStorageInput {
  @Text("The storage's platform name", 255)
  platform!: string;

  @Text("The dataset's path in that storage", 4000)
  location!: string;

  @IntegerField({
    min: 0,
    max: Number.MAX_SAFE_INTEGER,
    description:
      "The copy's total size in bytes (the import's provenance totals); the DCAT distribution's " +
      '`dcat:byteSize`. Absent: not known (kept as registered before).',
  })
  bytes?: number;

  @TextField({
    pattern: SHA256_HEX,
    patternMessage: 'must be a SHA-256 digest: 64 lowercase hexadecimal characters',
    description:
      "SHA-256 of the copy's stored manifest (`.provisioner/manifest-sha256.txt`, which lists " +
      "every file's SHA-256); the DCAT distribution's `spdx:checksum`. Absent: not known (kept " +
      'as registered before).',
  })
  manifest_sha256?: string;

  @TextField({
    max: 2000,
    pattern: DRS_URI,
    patternMessage: 'must be a hostname-based DRS URI: drs://<host>/<id>',
    description:
      "The copy as a GA4GH DRS object (the dataset's compound object on the provisioner's DRS " +
      'service); its DCAT distribution points at it. Absent: not served (kept as registered before).',
  })
  drs_uri?: string;
}

/** The hand-over from the submitting partner; one transfer per import. */
export class RegisteredTransferInput {
  @Text('The submitting partner: its name or acronym in the catalog', 255)
  partner!: string;

  @Text('Source system the data came from', 255)
  source!: string;

  @Text('Submission reference at the source', 255)
  submission!: string;

  @ApiProperty({
    description: 'The day the copy was published (YYYY-MM-DD)',
    example: '2026-11-22',
  })
  @Matches(/^\d{4}-\d{2}-\d{2}$/, { message: 'date must be a date (YYYY-MM-DD)' })
  @IsISO8601({ strict: true }, { message: 'date must be a date (YYYY-MM-DD)' })
  date!: string;
}

/** `POST /api/registrations`: one storage copy (and transfer) of one dataset. */
export class StorageRegistrationBody {
  @Text('The import that made the copy; registering it again changes nothing', 255)
  import_id!: string;

  @ApiProperty({ type: RegisteredDatasetInput })
  @IsDefined()
  @ValidateNested()
  @Type(() => RegisteredDatasetInput)
  dataset!: RegisteredDatasetInput;

  @ApiProperty({ type: RegisteredStorageInput })
  @IsDefined()
  @ValidateNested()
  @Type(() => RegisteredStorageInput)
  storage!: RegisteredStorageInput;

  @ApiPropertyOptional({ type: RegisteredTransferInput })
  @IsOptional()
  @ValidateNested()
  @Type(() => RegisteredTransferInput)
  transfer?: RegisteredTransferInput;
}

/** 200: what the registration found or made. */
export class StorageRegistrationResult {
  @ApiProperty({ enum: ['Success'] })
  status!: 'Success';

  @ApiProperty({ description: "The dataset's accession", example: 'ELU_I_131' })
  accession!: string;

  @ApiProperty({ description: 'The dataset was created by this call' })
  dataset_created!: boolean;

  @ApiProperty({ description: 'The storage row was added by this call' })
  storage_created!: boolean;

  @ApiProperty({ description: 'The transfer was added by this call' })
  transfer_created!: boolean;
}
