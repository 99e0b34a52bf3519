import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { AccessRequestsController } from './access-requests.controller';
import { webhookRoute } from './access-request-gate';

/** Every `METHOD /path` the webhook controller declares, as Nest will route it. */
function controllerRoutes(): { method: string; path: string }[] {
  const base = String(Reflect.getMetadata(PATH_METADATA, AccessRequestsController));
  const proto = AccessRequestsController.prototype as unknown as Record<string, unknown>;
  return Object.getOwnPropertyNames(proto).flatMap((name) => {
    const handler = proto[name];
    if (name === 'constructor' || typeof handler !== 'function') return [];
    const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
    if (method === undefined) return [];
    const sub = String(Reflect.getMetadata(PATH_METADATA, handler) ?? '/');
    const path = `/${[base, sub].join('/')}`.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
    return [{ method: RequestMethod[method], path }];
  });
}

/**
 * The webhook's gate is Express middleware (createCatalogApp installs it before routing, so a
 * refusal reads no body); the routes carry no guard of their own. A route added to the
 * controller off the gate's paths would be open to anyone: this holds each one to them, in any
 * case, as the router matches paths.
 */
describe('the access-request gate covers the webhook', () => {
  it('matches every route of AccessRequestsController, in any case', () => {
    const routes = controllerRoutes();
    expect(routes).toEqual(
      expect.arrayContaining([
        { method: 'POST', path: '/api/accessreq' },
        { method: 'POST', path: '/api/accessreq/revoke' },
      ]),
    );
    for (const { path } of routes) {
      expect(webhookRoute(path)).toBeDefined();
      expect(webhookRoute(path.toUpperCase())).toBe(webhookRoute(path));
    }
    expect(webhookRoute('/api/accessreq')).toBe('grant');
    expect(webhookRoute('/api/accessreq/revoke')).toBe('revoke');
  });
});
