import type { INestApplication } from '@nestjs/common';

export interface Route {
  method: string;
  /** Express path pattern, e.g. `/api/termsearch/:category`. */
  path: string;
}

interface RouterLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

/**
 * Every route the live Express router serves, read from the app itself, so routes added later
 * (writes, admin, integrations) are attacked without editing the test.
 */
export function listRoutes(app: INestApplication): Route[] {
  const express = app.getHttpAdapter().getInstance() as { router?: { stack?: RouterLayer[] } };
  const routes: Route[] = [];
  for (const layer of express.router?.stack ?? []) {
    if (!layer.route) continue;
    const methods = Object.entries(layer.route.methods).filter(([m, on]) => on && m !== '_all');
    // Catch-all middleware registered as a route for every method says nothing about the API.
    if (methods.length > 10) continue;
    for (const [method] of methods) routes.push({ method: method.toUpperCase(), path: layer.route.path });
  }
  return routes;
}
