import { Module } from '@nestjs/common';
import { C4ghRecipientController } from './c4gh-recipient.controller';

/** The API's archive-mode routes (the archive key itself comes from the global StorageModule). */
@Module({ controllers: [C4ghRecipientController] })
export class ArchiveModule {}
