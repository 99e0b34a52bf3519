import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { AccessRequestRefusalsService } from './access-request-refusals.service';
import { AccessRequestGate, webhookRoute } from './access-request-gate';

/** Applies the webhook's gate at the route too, so it holds however the app is assembled. */
@Injectable()
export class AccessRequestGuard implements CanActivate {
  private readonly gate: AccessRequestGate;

  constructor(
    @Inject(CATALOG_SETTINGS) settings: CatalogSettings,
    refusals: AccessRequestRefusalsService,
  ) {
    this.gate = new AccessRequestGate(settings, refusals);
  }

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<Request>();
    this.gate.check(req, webhookRoute(req.path) ?? 'grant');
    return true;
  }
}
