import type { INestApplication } from '@nestjs/common';
import { listRoutes, Route } from '../robustness/support/routes';

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Every route of the app that takes a body, with its path parameters filled in. */
export function writeRoutes(app: INestApplication): Route[] {
  return listRoutes(app)
    .filter((route) => BODY_METHODS.has(route.method))
    .map((route) => ({ ...route, path: route.path.replace(/:[A-Za-z_]+/g, 'x1') }));
}
