import { Controller, Get, Param, Req, Res, UseFilters } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '@app/auth';
import { answerHead, sendFile } from './byte-ranges';
import { DrsErrorsFilter } from './drs-errors.filter';
import { DrsService } from './drs.service';

/**
 * The bytes behind an access URL (`/drs-bytes/<token>/<name>`): the token is the credential, so
 * the route is outside the API-key guard; the name is only for clients that guess a format from
 * a URL's last segment. GET (and HEAD, which Express routes to GET), one range at a time.
 */
@ApiExcludeController()
@Controller('drs-bytes')
@Public()
@UseFilters(DrsErrorsFilter)
export class DrsBytesController {
  constructor(private readonly drs: DrsService) {}

  @Get(':token/:name')
  get(@Param('token') token: string, @Req() req: Request, @Res() res: Response) {
    return this.send(token, req, res);
  }

  private async send(token: string, req: Request, res: Response): Promise<void> {
    const target = await this.drs.bytesOf(token);
    if (target.kind === 'url') return res.redirect(307, target.url);
    if (target.kind === 'file') return sendFile(req, res, target);
    const range = answerHead(req, res, target.bytes.length, target.etag, target.name);
    if (range === undefined) return void res.end();
    res.end(target.bytes.subarray(range.start, range.end + 1));
  }
}
