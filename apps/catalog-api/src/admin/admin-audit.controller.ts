import { Controller, Get, Query } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { RequireKinds } from '@app/auth';
import { AuditService } from '../audit/audit.service';
import { ApiCall } from '../common/api-docs';
import { AUDIT_PAGE_SIZE, AuditQueryParams, toAuditQuery } from './admin-audit.dto';
import { AuditPage } from './admin-responses.dto';

@ApiTags('admin')
@Controller('api/admin/audit')
@RequireKinds('global')
export class AdminAuditController {
  constructor(private readonly audit: AuditService) {}

  /** Newest first, 100 a page: `{"results": [...], "pagination": {"more": bool}}`. */
  @ApiCall({
    summary: `The audit trail, newest first, ${AUDIT_PAGE_SIZE} a page`,
    caller: 'global key only',
    responses: [{ status: 200, description: 'One page of entries', body: AuditPage }],
  })
  @Get()
  async list(@Query() given: AuditQueryParams) {
    const { results, more } = await this.audit.list(toAuditQuery(given));
    return { results, pagination: { more } };
  }
}
