import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { BadRequestError } from '@app/errors';
import { AuditActor, AuditService } from '../audit/audit.service';
import { TermsService } from '../terms/terms.service';

/** OBO files announce themselves with a header or a stanza; anything else is read as TSV. */
export function detectVocabularyFormat(body: string): 'obo' | 'tsv' {
  return /^(format-version:|\[Term\])/m.test(body) ? 'obo' : 'tsv';
}

/** Loading vocabularies through TermsService, with an audit entry. */
@Injectable()
export class VocabularyAdminService {
  constructor(
    private readonly terms: TermsService,
    private readonly dataSource: DataSource,
    private readonly audit: AuditService,
  ) {}

  async load(category: string, body: unknown, format: string | undefined, actor: AuditActor) {
    if (typeof body !== 'string' || body.trim() === '') {
      throw new BadRequestError('The body must be a non-empty vocabulary file sent as text/plain');
    }
    const chosen = format ?? detectVocabularyFormat(body);
    const counts = await this.terms.loadVocabulary(category, body, chosen);
    // TermsService commits its own transaction; the entry follows it.
    await this.audit.record(this.dataSource.manager, {
      actor,
      action: 'load-vocabulary',
      objectType: 'vocabulary',
      objectId: category,
      change: { format: chosen, ...counts },
    });
    return { status: 'Success' as const, category, format: chosen, ...counts };
  }
}
