import { Controller, Get, Inject, Param, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { lstat } from 'node:fs/promises';
import { Public } from '@app/auth';
import { admitStreamedAnswer } from '@app/platform';
import { DRS_SETTINGS, type DrsSettings } from '../config/drs-settings';
import { ACCESS_URL_ROUTE } from './access-urls';
import { accelRedirectTarget } from './accel-redirect';
import { answerHead, sendFile, type Served } from './byte-ranges';
import { DrsError } from './drs-errors';
import { DrsErrorsFilter, noteDrsRequest } from './drs-errors.filter';
import { DrsService, type ReadFacts } from './drs.service';
import { readerRequestOf, sendCrypt4gh } from './reencrypted-download';
import { TrailEmitter } from '../trail/trail-emitter';

/**
 * The bytes behind an access URL (`/drs-bytes/<token>/<name>`): the token is the credential, so
 * the route is outside the API-key guard; the name is the object's, or a file's beside it in the
 * same dataset (an index found by URL: DrsService.bytesOf). GET (and HEAD, which Express routes to GET), one range at a time.
 */
@ApiExcludeController()
@Controller(ACCESS_URL_ROUTE)
@Public()
@UseFilters(DrsErrorsFilter)
export class DrsBytesController {
  private readonly offloadPrefix: string | null;
  /** How often a download under way checks its grant again (see DRS_GRANT_CHECK_SECONDS). */
  private readonly recheckMs: number;

  constructor(
    private readonly drs: DrsService,
    private readonly trail: TrailEmitter,
    @Inject(DRS_SETTINGS) settings: DrsSettings,
  ) {
    this.offloadPrefix = settings.bytesOffloadPrefix;
    this.recheckMs = Math.max(1, settings.grantCheckSeconds) * 1000;
  }

  @Get(':token/:name')
  get(
    @Param('token') token: string,
    @Param('name') name: string,
    @Req() req: Request,
    @Res() res: Response,
  ) {
    return this.send(token, name, req, res);
  }

  private async send(token: string, name: string, req: Request, res: Response): Promise<void> {
    // Counted as a download being sent from now (checked and counted in one step), not from its
    // first byte: a burst of reads cannot all pass the slow-reader bounds before any is counted.
    admitStreamedAnswer(req);
    const target = await this.drs.bytesOf(token, name, readerRequestOf(req), (facts) =>
      noteDrsRequest(req, facts),
    );
    // Handed to the store (a signed URL) or to nginx: the bytes they send are theirs to count.
    if (target.kind === 'url') {
      await this.served(target.read);
      return res.redirect(307, target.url);
    }
    if (target.kind === 'file' && this.offloadPrefix !== null) {
      // As sendFile: only the regular file of the recorded size is handed over (nginx's
      // disable_symlinks also refuses links met on the way).
      const stat = await lstat(target.file).catch(() => null);
      if (stat === null || !stat.isFile() || stat.size !== target.size) {
        throw new DrsError(404, 'not_found', 'The object is no longer stored as recorded');
      }
      // The access URL is checked; nginx sends the bytes (sendfile, ranges, ETag, HEAD) and keeps
      // the headers below, which must be ours whoever sends the body.
      res.setHeader('Content-Type', 'application/octet-stream');
      res.setHeader('Content-Disposition', `attachment; filename="${target.name}"`);
      res.setHeader('Cache-Control', 'private, no-store');
      res.setHeader(
        'X-Accel-Redirect',
        accelRedirectTarget(this.offloadPrefix, target.storagePath),
      );
      // Recorded before the answer: once nginx has it the bytes go, whatever becomes of this
      // process (the queue write is under a millisecond of it: docs/decisions/drs-bench-ceiling.md).
      await this.served(target.read);
      return void res.status(200).end();
    }
    if (target.kind === 'crypt4gh') {
      // Counted in the stream sent: the reader's header, then the stored body (or the plain-text).
      const sent = await sendCrypt4gh(req, res, target.stream, {
        everyMs: this.recheckMs,
        stillAllowed: target.stillGranted,
      });
      if (sent !== undefined) await this.served(target.read, sent);
      return;
    }
    if (target.kind === 'file') {
      // The grant's answer is remembered for DRS_GRANT_CHECK_SECONDS and asked again after as
      // long: a revoked grant ends a download under way within twice that (at least 2 s).
      const sent = await sendFile(req, res, target, {
        everyMs: this.recheckMs,
        stillAllowed: target.stillGranted,
      });
      if (sent !== undefined) await this.served(target.read, sent);
      return;
    }
    const range = answerHead(req, res, target.bytes.length, target.etag, target.name);
    if (range === undefined) return void res.end();
    res.end(target.bytes.subarray(range.start, range.end + 1));
    await this.served(target.read, { start: range.start, bytes: range.end - range.start + 1 });
  }

  /** The trail's record of a read: after the bytes (its outbox never holds a download up). */
  private served(read: ReadFacts, sent?: Served): Promise<void> {
    return this.trail.emit({
      type: 'drs_object.serve',
      object_id: read.object,
      subject: read.subject,
      dataset: read.dataset,
      ...(sent === undefined ? {} : { range_start: sent.start, bytes: sent.bytes }),
    });
  }
}
