import type { Application } from 'express';
import { INestApplication } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { OperationObject, PathItemObject, SecurityRequirementObject } from '@nestjs/swagger';
import { ALLOW_BEARER, API_KEY_QUERY, IS_PUBLIC, OPTIONAL_AUTH } from '@app/auth';
import { ERROR_ENVELOPE, ERROR_ENVELOPE_SCHEMA, errorResponseComponents } from './error-responses';

export const API_KEY_HEADER_SCHEME = 'ApiKeyHeader';
export const API_KEY_QUERY_SCHEME = 'ApiKeyQuery';
/** Declared only in documents with an `@AllowBearer()` route. */
export const BEARER_SCHEME = 'IdpBearer';

export interface OpenApiOptions {
  title: string;
  version: string;
  description?: string;
  /** Where the UI is served (`api/docs`); the document is at `<path>-json`. */
  path: string;
  /** Further pages `GET /` names besides the docs, health and metrics (e.g. a dashboard). */
  links?: Record<string, string>;
}

type Access = { kind: 'public' | 'optional' | 'key'; bearer: boolean };
type Handler = (...args: unknown[]) => unknown;

const operationId = (controller: string, method: string): string => `${controller}_${method}`;

/** Who may call each route, by operation id, from the same metadata the global guard reads. */
function accessByOperation(app: INestApplication): Map<string, Access> {
  const reflector = new Reflector();
  const access = new Map<string, Access>();
  for (const module of app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: unknown[]) => unknown) | null;
      if (!controller || !Reflect.hasMetadata(PATH_METADATA, controller)) continue;
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (
          typeof handler !== 'function' ||
          Reflect.getMetadata(METHOD_METADATA, handler) === undefined
        )
          continue;
        const targets = [handler as Handler, controller];
        const kind: Access['kind'] = reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets)
          ? 'public'
          : reflector.getAllAndOverride<boolean>(OPTIONAL_AUTH, targets)
            ? 'optional'
            : 'key';
        const bearer = reflector.getAllAndOverride<boolean>(ALLOW_BEARER, targets) ?? false;
        access.set(operationId(controller.name, name), { kind, bearer });
      }
    }
  }
  return access;
}

const errorRef = (status: number) => ({ $ref: `#/components/responses/Error${status}` });
const KEY_SCHEMES: SecurityRequirementObject[] = [
  { [API_KEY_HEADER_SCHEME]: [] },
  { [API_KEY_QUERY_SCHEME]: [] },
];

/** Adds what every route shares (security and the common errors) without overriding a route's own. */
function describeOperation(operation: OperationObject, access: Access): void {
  const common: number[] = [500];
  if (access.kind === 'public') {
    operation.security = [];
  } else {
    const schemes = access.bearer ? [...KEY_SCHEMES, { [BEARER_SCHEME]: [] }] : KEY_SCHEMES;
    operation.security = access.kind === 'optional' ? [{}, ...schemes] : schemes;
    // 429: the address is blocked after too many failed authentications.
    common.push(401, 429);
    if (access.kind === 'key') common.push(403);
  }
  if ((operation.parameters ?? []).length > 0) common.push(400);
  if (operation.requestBody) common.push(400, 413, 415);
  operation.responses ??= {};
  for (const status of common) operation.responses[String(status)] ??= errorRef(status);
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Builds the app's OpenAPI document from its controllers (no hand-written paths). */
export function buildOpenApiDocument(
  app: INestApplication,
  options: OpenApiOptions,
): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle(options.title)
    .setVersion(options.version)
    .setDescription(options.description ?? '')
    .addApiKey(
      {
        type: 'apiKey',
        in: 'header',
        name: 'X-API-Key',
        description: 'The API key (preferred form)',
      },
      API_KEY_HEADER_SCHEME,
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'query',
        name: API_KEY_QUERY,
        description: 'The API key (older form; the header wins)',
      },
      API_KEY_QUERY_SCHEME,
    )
    .build();
  const document = SwaggerModule.createDocument(app, config, { operationIdFactory: operationId });
  document.components ??= {};
  document.components.schemas = {
    ...document.components.schemas,
    [ERROR_ENVELOPE]: ERROR_ENVELOPE_SCHEMA,
  };
  document.components.responses = {
    ...document.components.responses,
    ...errorResponseComponents(),
  };

  const access = accessByOperation(app);
  for (const item of Object.values(document.paths) as PathItemObject[]) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (operation) {
        describeOperation(
          operation,
          access.get(operation.operationId ?? '') ?? { kind: 'key', bearer: false },
        );
      }
    }
  }
  if ([...access.values()].some((a) => a.bearer && a.kind !== 'public')) {
    document.components.securitySchemes = {
      ...document.components.securitySchemes,
      [BEARER_SCHEME]: {
        type: 'http',
        scheme: 'bearer',
        description: 'An access token of the identity provider, on the routes that accept one',
      },
    };
  }
  return document;
}

/**
 * Serves the document (`<path>-json`) and its UI (`<path>`), both open, and `GET /`, which names
 * them (a newcomer's first request): plain Express routes, outside the global guard. Call before
 * `init()`/`listen()`.
 */
export function setupOpenApi(app: INestApplication, options: OpenApiOptions): OpenAPIObject {
  const document = buildOpenApiDocument(app, options);
  SwaggerModule.setup(options.path, app, document, {
    jsonDocumentUrl: `${options.path}-json`,
    raw: ['json'],
  });
  const home = JSON.stringify({
    service: options.title,
    version: options.version,
    links: {
      docs: `/${options.path}`,
      openapi: `/${options.path}-json`,
      health: '/health/ready',
      metrics: '/metrics',
      ...options.links,
    },
  });
  (app.getHttpAdapter().getInstance() as Application).get('/', (_req, res) => {
    res.type('application/json; charset=utf-8').send(home);
  });
  return document;
}
