import type { Request } from 'express';
import { METHODS } from 'node:http';

/** The parts of an Express 5 router layer this module reads (the router keeps them untyped). */
interface RouteLayer {
  route?: { methods: Record<string, boolean> };
  match(path: string): boolean;
}

/**
 * Methods the app's router would accept for this request's path. Read from the live router so
 * a 405's `Allow` header can never disagree with the routes actually registered.
 */
export function allowedMethodsFor(req: Request): string[] {
  const router = (req.app as unknown as { router?: { stack?: RouteLayer[] } }).router;
  const methods = new Set<string>();
  for (const layer of router?.stack ?? []) {
    if (!layer.route || !layer.match(req.path)) continue;
    const routeMethods = Object.entries(layer.route.methods);
    // Middleware mounted for every route (request logging) registers an all-methods route;
    // it says nothing about which methods the path really serves.
    if (routeMethods.length >= METHODS.length - 1) continue;
    for (const [method, enabled] of routeMethods) {
      if (enabled && method !== '_all') methods.add(method.toUpperCase());
    }
  }
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}
