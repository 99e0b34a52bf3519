import { Controller, Get, Inject, StreamableFile } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { NotFoundError } from '@app/errors';
import { ApiErrorResponses } from '@app/platform';
import { ARCHIVE_KEY, type ArchiveKey } from '../storage/archive-key';

/**
 * The archive's Crypt4GH public key, for depositors to encrypt for (`crypt4gh encrypt
 * --recipient_pk`): public by nature, so outside the API-key guard.
 */
@ApiTags('archive')
@Controller('.well-known')
@Public()
export class C4ghRecipientController {
  constructor(@Inject(ARCHIVE_KEY) private readonly key: ArchiveKey | null) {}

  @ApiOperation({
    summary: "The archive's Crypt4GH public key (a c4gh key file) in archive mode",
  })
  @ApiProduces('text/plain')
  @ApiResponse({ status: 200, description: '-----BEGIN CRYPT4GH PUBLIC KEY----- …' })
  @ApiErrorResponses(404)
  @Get('c4gh-recipient')
  recipient(): StreamableFile {
    if (this.key === null)
      throw new NotFoundError(
        'Archive mode is off (STORAGE_ENCRYPTION): files are stored unencrypted',
      );
    // The media type goes with the answer, not as a route header: a route header is set before
    // the handler runs, so a refusal's JSON envelope would carry it too.
    return new StreamableFile(Buffer.from(this.key.publicKeyFile), {
      type: 'text/plain; charset=utf-8',
    });
  }
}
