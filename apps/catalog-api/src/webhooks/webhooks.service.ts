import { Inject, Injectable } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { NotFoundError, ValidationFailedError } from '@app/errors';
import { DataSource } from 'typeorm';
import { AuditActor, AuditService } from '../audit/audit.service';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import type { CreateSubscriptionBody, DeadLetterView, SubscriptionView } from './webhooks.dto';
import { SubscriptionRow, WebhooksRepository } from './webhooks.repository';

/** Dead letters listed per answer. */
const DEAD_LETTERS_SHOWN = 1000;

const view = (row: SubscriptionRow): SubscriptionView => ({
  id: row.id,
  url: row.url,
  events: row.events,
  created_at: row.created_at.toISOString(),
});

/** The subscriptions an admin manages (the HTTP routes and the CLI), each change audited. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly subscriptions: WebhooksRepository,
    private readonly audit: AuditService,
    @Inject(CATALOG_SETTINGS) private readonly settings: CatalogSettings,
  ) {}

  create(input: CreateSubscriptionBody, actor: AuditActor): Promise<SubscriptionView> {
    const url = new URL(input.url);
    if (url.protocol !== 'https:' && !this.settings.WEBHOOK_ALLOW_HTTP) {
      throw new ValidationFailedError([
        { field: 'url', message: 'must be https (WEBHOOK_ALLOW_HTTP is off)' },
      ]);
    }
    if (url.username !== '' || url.password !== '') {
      throw new ValidationFailedError([{ field: 'url', message: 'must not hold credentials' }]);
    }
    const secret = input.secret ?? `whsec_${randomBytes(32).toString('base64')}`;
    const events = input.events === undefined ? null : [...new Set(input.events)].sort();
    return this.dataSource.transaction(async (m) => {
      const row = await this.subscriptions.insert(m, url.href, events, secret);
      await this.audit.record(m, {
        actor,
        action: 'create',
        objectType: 'subscription',
        objectId: row.id,
        change: { url: row.url, events },
      });
      return { ...view(row), ...(input.secret === undefined ? { secret } : {}) };
    });
  }

  async list(): Promise<SubscriptionView[]> {
    return (await this.subscriptions.list(this.dataSource.manager)).map(view);
  }

  remove(id: number, actor: AuditActor): Promise<{ status: 'Success' }> {
    return this.dataSource.transaction(async (m) => {
      if (!(await this.subscriptions.delete(m, id)))
        throw new NotFoundError('No such subscription');
      await this.audit.record(m, {
        actor,
        action: 'delete',
        objectType: 'subscription',
        objectId: id,
      });
      return { status: 'Success' as const };
    });
  }

  async deadLetters(id: number): Promise<DeadLetterView[]> {
    const m = this.dataSource.manager;
    if (!(await this.subscriptions.exists(m, id))) throw new NotFoundError('No such subscription');
    return this.subscriptions.deadLetters(m, id, DEAD_LETTERS_SHOWN);
  }

  replay(id: number, ids: string[] | undefined, actor: AuditActor): Promise<{ replayed: number }> {
    return this.dataSource.transaction(async (m) => {
      if (!(await this.subscriptions.exists(m, id)))
        throw new NotFoundError('No such subscription');
      const replayed = await this.subscriptions.replay(m, id, ids ?? null);
      await this.audit.record(m, {
        actor,
        action: 'replay',
        objectType: 'subscription',
        objectId: id,
        change: { replayed, ...(ids === undefined ? {} : { ids }) },
      });
      return { replayed };
    });
  }
}
