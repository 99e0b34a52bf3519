import type { INestApplication } from '@nestjs/common';
import type { OpenAPIObject } from '@nestjs/swagger';
import { METHODS } from 'node:http';

/** The parts of an Express 5 router layer read here (the router keeps them untyped). */
interface RouteLayer {
  route?: { path: string; methods: Record<string, boolean> };
}

const DOCUMENTED_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

/** `/datasets/:srcsys/diff` → `/datasets/{srcsys}/diff`, the OpenAPI spelling. */
function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/**
 * Every `METHOD /path` the app's router really serves, read from the live Express router.
 * Catch-all routes that middleware registers (all methods) are not endpoints.
 */
export function registeredRoutes(app: INestApplication, exclude: RegExp): string[] {
  const express = app.getHttpAdapter().getInstance() as { router: { stack: RouteLayer[] } };
  const routes = new Set<string>();
  for (const layer of express.router.stack) {
    if (!layer.route) continue;
    const methods = Object.keys(layer.route.methods);
    if (methods.includes('_all') || methods.length >= METHODS.length - 1) continue;
    const path = toOpenApiPath(layer.route.path);
    if (exclude.test(path)) continue;
    for (const [method, enabled] of Object.entries(layer.route.methods)) {
      if (enabled) routes.add(`${method.toUpperCase()} ${path}`);
    }
  }
  return [...routes].sort();
}

/** Every `METHOD /path` the OpenAPI document describes. */
export function documentedRoutes(document: OpenAPIObject): string[] {
  return Object.entries(document.paths)
    .flatMap(([path, item]) =>
      DOCUMENTED_METHODS.filter((m) => (item as Record<string, unknown>)[m] !== undefined).map(
        (m) => `${m.toUpperCase()} ${path}`,
      ),
    )
    .sort();
}
