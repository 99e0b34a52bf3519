import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { CATALOG_SETTINGS, CatalogSettings } from '../config/catalog.settings';
import { AccessRequestGate } from './access-request.gate';

/** Applies the webhook's gate at the route too, so it holds however the app is assembled. */
@Injectable()
export class AccessRequestGuard implements CanActivate {
  private readonly gate: AccessRequestGate;

  constructor(@Inject(CATALOG_SETTINGS) settings: CatalogSettings) {
    this.gate = new AccessRequestGate(settings);
  }

  canActivate(context: ExecutionContext): boolean {
    this.gate.check(context.switchToHttp().getRequest<Request>());
    return true;
  }
}
