import type {
  OpenAPIObject,
  OperationObject,
  ParameterObject,
  PathItemObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger';
import request from 'supertest';
import { CALLERS } from '../src/common/api-docs';
import { PROJECT_FIELDS } from '../src/projects/project.exporter';
import {
  startCatalogApp,
  TEST_GLOBAL_KEY,
  type CatalogTestApp,
} from '../../../test/support/catalog-app';

/**
 * The catalog's OpenAPI document against the contract (spec/catalog-api.md §3-§5): what each
 * route documents, and that the documented parameter constraints are the ones the app enforces.
 */

let t: CatalogTestApp;
let document: OpenAPIObject;

beforeAll(async () => {
  t = await startCatalogApp();
  document = (await request(t.server).get('/api/docs-json').expect(200)).body as OpenAPIObject;
});

afterAll(async () => {
  await t.close();
});

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

interface Operation {
  route: string;
  method: (typeof METHODS)[number];
  path: string;
  op: OperationObject;
}

/** Every operation of the contract's routes (`/api/...`; health and metrics come from libs). */
function apiOperations(): Operation[] {
  return Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/api/'))
    .flatMap(([path, item]) =>
      METHODS.filter((method) => (item as PathItemObject)[method] !== undefined).map((method) => ({
        route: `${method.toUpperCase()} ${path}`,
        method,
        path,
        op: (item as PathItemObject)[method] as OperationObject,
      })),
    );
}

const parameters = (op: OperationObject, where: 'path' | 'query'): ParameterObject[] =>
  ((op.parameters ?? []) as ParameterObject[]).filter((p) => p.in === where);

function operation(route: string): OperationObject {
  const found = apiOperations().find((o) => o.route === route);
  if (found === undefined) throw new Error(`${route} is not documented`);
  return found.op;
}

/** A schema, or the component a `$ref` names (DTO classes are documented as components). */
function successSchema(route: string): SchemaObject {
  const responses = operation(route).responses as Record<string, ResponseObject>;
  const ok = Object.keys(responses).find((status) => /^2\d\d$/.test(status)) ?? '';
  // The DCAT routes answer RDF: their first media type stands for the body.
  const content = responses[ok]?.content ?? {};
  return resolved(
    (content['application/json'] ?? Object.values(content)[0])?.schema,
  ) as SchemaObject;
}

/** A schema with every `$ref` replaced by the component it names (DTO classes are components). */
function resolved(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(resolved);
  if (schema === null || typeof schema !== 'object') return schema;
  const ref = (schema as ReferenceObject).$ref;
  if (ref !== undefined) {
    return resolved(document.components?.schemas?.[ref.replace('#/components/schemas/', '')]);
  }
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, resolved(value)]));
}

const POSITIVE_INT = { type: 'integer', minimum: 1 };
const PROJECT_ID = { name: 'project_id', required: false, schema: POSITIVE_INT };

/** Exact filters (docs/catalog-api.md): optional, each name with its value's schema. */
const exact = (names: string[], schema: object) =>
  names.map((name) => ({ name, required: false, schema }));
const text = (maxLength: number) => ({ type: 'string', minLength: 1, maxLength });
const ID_FILTER = exact(['id', 'id_at_source'], POSITIVE_INT);
const ACCESSION_FILTER = exact(['elu_accession', 'external_id'], text(20));
const byName = (entries: object[]) =>
  [...entries].sort((a, b) =>
    (a as { name: string }).name.localeCompare((b as { name: string }).name),
  );

/** The query parameters of the contract, per route; any route not listed takes none. */
const CONTRACT_QUERIES: Record<string, object[]> = {
  'GET /api/termsearch/{category}': [
    { name: 'page', required: true, schema: POSITIVE_INT },
    { name: 'search', required: true, schema: { type: 'string', minLength: 1, maxLength: 200 } },
  ],
  'GET /api/cohorts': byName([
    ...ID_FILTER,
    ...ACCESSION_FILTER,
    ...exact(['title', 'name'], text(255)),
  ]),
  'GET /api/partners': byName([
    {
      name: 'fields',
      required: false,
      style: 'form',
      explode: false,
      schema: { type: 'array', items: { enum: ['external_id', 'acronym', 'name'] } },
    },
    { name: 'published', required: false, schema: { type: 'boolean' } },
    ...ID_FILTER,
    ...ACCESSION_FILTER,
    ...exact(['acronym'], text(255)),
    ...exact(['name'], text(255)),
  ]),
  'GET /api/projects': byName([
    { name: 'fields', required: false, schema: { items: { enum: [...PROJECT_FIELDS] } } },
    PROJECT_ID,
    ...ID_FILTER,
    ...ACCESSION_FILTER,
    ...exact(['acronym'], text(200)),
    ...exact(['title', 'name'], text(500)),
  ]),
  'GET /api/datasets': byName([
    PROJECT_ID,
    { name: 'project_title', required: false, schema: { type: 'string', minLength: 1 } },
    ...ID_FILTER,
    ...ACCESSION_FILTER,
    ...exact(['title', 'name'], text(255)),
    ...exact(['unique_id', 'elu_uuid'], { type: 'string', format: 'uuid' }),
  ]),
  'GET /api/contracts': [PROJECT_ID],
  'GET /api/dcat': [
    { name: 'format', required: false, schema: { enum: ['ttl', 'jsonld', 'rdf'] } },
    { name: 'page', required: false, schema: POSITIVE_INT },
  ],
  'GET /api/dcat/datasets/{accession}': [
    { name: 'format', required: false, schema: { enum: ['ttl', 'jsonld', 'rdf'] } },
  ],
  'GET /api/admin/audit': [
    { name: 'object', required: false },
    { name: 'page', required: false, schema: POSITIVE_INT },
    { name: 'since', required: false },
  ],
  'POST /api/admin/terms/{category}': [
    { name: 'format', required: false, schema: { enum: ['obo', 'tsv'] } },
  ],
  // Issue 56: a permission query, and the visa query, say why an access is left out, to the
  // global key.
  'GET /api/ga4gh/permissions/{user_oidc_id}': [
    { name: 'expired', required: false, schema: { type: 'boolean' } },
    { name: 'explain', required: false, schema: { type: 'boolean' } },
  ],
  'GET /api/permissions/{user_oidc_id}': [
    { name: 'explain', required: false, schema: { type: 'boolean' } },
  ],
};

/** Errors each route answers beyond the shared ones (401/403/400/413/415/500/503). */
const ROUTE_ERRORS: Record<string, number[]> = {
  'GET /api/termsearch/{category}': [404],
  'GET /api/permissions/{user_oidc_id}': [404],
  'GET /api/ga4gh/permissions/{user_oidc_id}': [404],
  'GET /api/dcat': [404],
  'GET /api/dcat/datasets/{accession}': [404],
  'GET /api/projects/{acronym}/audit-crate': [404],
  'POST /api/admin/users': [409],
  'POST /api/admin/users/{id}/api-key': [404],
  'PATCH /api/admin/users/{id}': [404, 409],
  'POST /api/admin/endpoints': [409],
  'POST /api/admin/exposures': [409],
  'DELETE /api/admin/exposures/{id}': [404, 409],
  'DELETE /api/admin/grants': [404],
  'POST /api/admin/partners/{id}/publish': [404],
  'POST /api/admin/cohorts/{id}/unpublish': [404],
  'PUT /api/admin/datasets/{dataset}/vp-discoverable': [404],
  'POST /api/admin/terms/{category}': [404],
  'POST /api/idp/force': [409],
  'POST /api/accessreq': [403],
  'POST /api/accessreq/revoke': [403],
  'POST /api/partners': [409],
  'POST /api/datasets': [409],
};

/** The writes that take no body. */
const BODILESS = /\/(publish|unpublish|api-key|force)$|^\/api\/admin\/subscriptions\/\{id\}$/;

describe('Catalog OpenAPI document', () => {
  it('covers the routes of the contract (§3-§5), and the audit trail', () => {
    // operations.e2e-spec compares the document with the router; this catches a route that
    // is missing from both.
    const reads = ['cohorts', 'partners', 'projects', 'datasets', 'contracts', 'users'];
    const imports = ['partners', 'cohorts', 'projects', 'datasets', 'contracts'];
    const publishing = ['partners', 'cohorts'].flatMap((kind) =>
      ['publish', 'unpublish'].map((verb) => `POST /api/admin/${kind}/{id}/${verb}`),
    );
    expect(
      apiOperations()
        .map((o) => o.route)
        .sort(),
    ).toEqual(
      [
        ...reads.map((r) => `GET /api/${r}`),
        'GET /api/termsearch/{category}',
        'GET /api/permissions/{user_oidc_id}',
        'GET /api/dcat',
        'GET /api/dcat/context.jsonld',
        'GET /api/dcat/datasets/{accession}',
        'POST /api/accessreq',
        'POST /api/accessreq/revoke',
        'POST /api/idp/force',
        ...imports.map((kind) => `POST /api/${kind}`),
        'POST /api/admin/users',
        'POST /api/admin/users/{id}/api-key',
        'PATCH /api/admin/users/{id}',
        'POST /api/admin/endpoints',
        'POST /api/admin/exposures',
        'DELETE /api/admin/exposures/{id}',
        'POST /api/admin/grants',
        'DELETE /api/admin/grants',
        ...publishing,
        'PUT /api/admin/datasets/{dataset}/vp-discoverable',
        'POST /api/admin/terms/{category}',
        'GET /api/admin/audit',
        'GET /api/projects/{acronym}/audit-crate',
        'POST /api/admin/subscriptions',
        'GET /api/admin/subscriptions',
        'DELETE /api/admin/subscriptions/{id}',
        'GET /api/admin/subscriptions/{id}/dead-letters',
        'POST /api/admin/subscriptions/{id}/dead-letters/replay',
        'POST /api/registrations',
        'POST /api/trail/events',
        'GET /api/ga4gh/permissions/{user_oidc_id}',
        'GET /api/jwk',
      ].sort(),
    );
  });

  it('gives every operation a tag and a summary that ends naming who may call it', () => {
    const callers = CALLERS.map((c) => `(${c})`);
    for (const { route, op } of apiOperations()) {
      expect({ route, tags: op.tags?.length }).toEqual({ route, tags: 1 });
      const names = callers.some((c) => op.summary?.endsWith(c) === true);
      expect({ route, summary: op.summary, names }).toEqual({
        route,
        summary: expect.any(String),
        names: true,
      });
    }
    expect(operation('GET /api/cohorts').summary).toMatch(/\(public\)$/);
    expect(operation('POST /api/admin/grants').summary).toMatch(/\(global key only\)$/);
  });

  it('documents every path parameter as required, with a type or the allowed values', () => {
    for (const { route, path, op } of apiOperations()) {
      const inTemplate = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const documented = parameters(op, 'path');
      expect({ route, names: documented.map((p) => p.name).sort() }).toEqual({
        route,
        names: inTemplate,
      });
      for (const p of documented) {
        const schema = p.schema as SchemaObject;
        expect({
          route,
          name: p.name,
          required: p.required,
          typed: Boolean(schema.type ?? schema.enum),
        }).toEqual({ route, name: p.name, required: true, typed: true });
      }
    }
    expect(parameters(operation('GET /api/termsearch/{category}'), 'path')[0].schema).toMatchObject(
      { enum: ['disease', 'phenotype', 'study', 'gene'] },
    );
    expect(parameters(operation('PATCH /api/admin/users/{id}'), 'path')[0].schema).toMatchObject(
      POSITIVE_INT,
    );
  });

  it("documents exactly the contract's query parameters, with required flags and constraints", () => {
    for (const { route, op } of apiOperations()) {
      const documented = parameters(op, 'query').sort((a, b) => a.name.localeCompare(b.name));
      const expected = CONTRACT_QUERIES[route] ?? [];
      expect({ route, names: documented.map((p) => p.name) }).toEqual({
        route,
        names: expected.map((p) => (p as { name: string }).name),
      });
      expected.forEach((p, i) => expect(documented[i]).toMatchObject(p));
    }
  });

  it('documents the JSON body of every write that takes one', () => {
    for (const { route, method, path, op } of apiOperations()) {
      if (method === 'get') continue;
      const content = (op.requestBody as { content?: Record<string, { schema?: unknown }> })
        ?.content;
      if (BODILESS.test(path)) {
        expect({ route, body: content }).toEqual({ route, body: undefined });
        continue;
      }
      const type = path.startsWith('/api/admin/terms/') ? 'text/plain' : 'application/json';
      expect({ route, schema: resolved(content?.[type]?.schema) }).toEqual({
        route,
        schema: expect.objectContaining({ type: expect.any(String) }),
      });
    }
    const imported = operation('POST /api/projects').requestBody as {
      content: Record<string, { schema: SchemaObject }>;
    };
    expect(resolved(imported.content['application/json'].schema)).toMatchObject({
      required: ['items'],
      properties: { items: { type: 'array', items: { properties: { acronym: {} } } } },
    });
  });

  it('lists the error responses of every operation, each in the error envelope', () => {
    for (const { route, op } of apiOperations()) {
      const responses = op.responses as Record<string, ResponseObject | ReferenceObject>;
      const expected = [500, 503, ...(ROUTE_ERRORS[route] ?? [])];
      if (op.security?.length) expected.push(401, 429);
      if (op.security?.length && !op.security.some((s) => Object.keys(s).length === 0))
        expected.push(403);
      if ((op.parameters ?? []).length > 0 || op.requestBody) expected.push(400);
      if (op.requestBody) expected.push(413, 415);
      for (const status of expected) {
        expect({ route, status, listed: responses[String(status)] !== undefined }).toEqual({
          route,
          status,
          listed: true,
        });
      }
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue;
        const envelope =
          ('$ref' in response && response.$ref === `#/components/responses/Error${status}`) ||
          (
            (response as ResponseObject).content?.['application/json']?.schema as
              ReferenceObject | undefined
          )?.$ref === '#/components/schemas/ErrorEnvelope';
        expect({ route, status, envelope }).toEqual({ route, status, envelope: true });
      }
    }
  });

  it('describes every success body with a schema: wrappers, bare arrays and status counts', () => {
    for (const { route } of apiOperations()) {
      expect({ route, schema: successSchema(route) }).toEqual({
        route,
        schema: expect.objectContaining({ type: expect.any(String) }),
      });
    }
    expect(successSchema('GET /api/projects')).toMatchObject({
      required: ['$schema', 'items'],
      properties: {
        $schema: {
          enum: [
            'https://raw.githubusercontent.com/elixir-luxembourg/json-schemas/v0.0.6/schemas/elu-project.json',
          ],
        },
        items: { items: { required: [...PROJECT_FIELDS] } },
      },
    });
    expect(successSchema('GET /api/datasets').required).toEqual(['$schema', 'items']);
    expect(successSchema('GET /api/contracts').required).toEqual(['items']);
    expect(successSchema('GET /api/cohorts').required).toEqual(['results']);
    expect(successSchema('GET /api/termsearch/{category}').required).toEqual([
      'results',
      'pagination',
    ]);
    expect(successSchema('GET /api/permissions/{user_oidc_id}')).toMatchObject({
      type: 'array',
      items: { type: 'string' },
    });
    expect(successSchema('POST /api/datasets').required).toEqual(['status', 'created', 'updated']);
    expect(successSchema('POST /api/accessreq').required).toEqual([
      'status',
      'created',
      'updated',
      'unchanged',
    ]);
    expect(successSchema('POST /api/idp/force').required).toEqual([
      'status',
      'created',
      'updated',
      'unchanged',
      'skipped',
    ]);
    expect(Object.keys(operation('POST /api/admin/grants').responses).sort()).toEqual(
      expect.arrayContaining(['200', '201']),
    );
  });

  it('names the identity-provider bearer token where the app accepts one', () => {
    expect(document.components?.securitySchemes?.IdpBearer).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    const bearerRoutes = ['GET /api/users', 'GET /api/ga4gh/permissions/{user_oidc_id}'];
    for (const route of bearerRoutes)
      expect(operation(route).security).toContainEqual({ IdpBearer: [] });
    const bearerElsewhere = apiOperations().filter(
      ({ route, op }) =>
        !bearerRoutes.includes(route) && op.security?.some((s) => 'IdpBearer' in s) === true,
    );
    expect(bearerElsewhere.map((o) => o.route)).toEqual([]);
  });
});

/** A value the documented schema rules out. */
function invalidValue(schema: SchemaObject): string {
  if (schema.type === 'array' || schema.enum !== undefined) return 'no-such-value';
  if (schema.type === 'integer') return String((schema.minimum ?? 1) - 1);
  if (schema.type === 'boolean') return 'maybe';
  if (schema.maxLength !== undefined) return 'x'.repeat(schema.maxLength + 1);
  if (schema.pattern !== undefined) return '!';
  throw new Error(`no invalid value for ${JSON.stringify(schema)}`);
}

/** A value the documented schema allows, for the required parameters not under test. */
function validValue(schema: SchemaObject): string {
  return schema.type === 'integer' ? String(schema.minimum ?? 1) : 'x';
}

describe('Documented parameter constraints are the enforced ones', () => {
  it('answers a value outside each documented query or path parameter with a 400 naming it (a 404 for a path enum)', async () => {
    const http = request(t.server);
    const checked: string[] = [];
    for (const { route, method, path, op } of apiOperations()) {
      for (const target of (op.parameters ?? []) as ParameterObject[]) {
        // Query parameters of reads, and the integer ids of every route (checked before the body).
        const schema = target.schema as SchemaObject;
        if (target.in === 'query' && method !== 'get') continue;
        if (target.in === 'path' && method !== 'get' && schema.type !== 'integer') continue;
        const value = (p: ParameterObject) =>
          p === target
            ? invalidValue(p.schema as SchemaObject)
            : validValue(p.schema as SchemaObject);
        const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
          const p = parameters(op, 'path').find((q) => q.name === name) as ParameterObject;
          const schemaOf = p.schema as SchemaObject;
          // Valid enum path values are the documented ones.
          return encodeURIComponent(
            p === target ? value(p) : String(schemaOf.enum?.[0] ?? validValue(schemaOf)),
          );
        });
        const query = Object.fromEntries(
          parameters(op, 'query')
            .filter((p) => p === target || p.required)
            .map((p) => [p.name, value(p)]),
        );
        const sent = http[method](url).query(query).set('X-API-Key', TEST_GLOBAL_KEY);
        const response = await (method === 'get' ? sent : sent.send({}));
        const expected = target.in === 'path' && schema.enum !== undefined ? 404 : 400;
        const named =
          expected === 404 ||
          (response.body as { more?: { errors?: { parameter?: string }[] } }).more?.errors?.[0]
            ?.parameter === target.name;
        expect({ route, parameter: target.name, status: response.status, named }).toEqual({
          route,
          parameter: target.name,
          status: expected,
          named: true,
        });
        checked.push(`${route} ${target.name}`);
      }
    }
    // Guards against the loop quietly checking nothing.
    expect(checked).toEqual(
      expect.arrayContaining([
        'GET /api/termsearch/{category} search',
        'GET /api/termsearch/{category} page',
        'GET /api/termsearch/{category} category',
        'GET /api/partners fields',
        'GET /api/partners published',
        'GET /api/projects fields',
        'GET /api/datasets project_title',
        'GET /api/datasets elu_accession',
        'GET /api/datasets unique_id',
        'GET /api/projects acronym',
        'GET /api/partners name',
        'GET /api/cohorts title',
        'GET /api/cohorts id',
        'GET /api/contracts project_id',
        'GET /api/permissions/{user_oidc_id} user_oidc_id',
        'GET /api/admin/audit since',
        'PATCH /api/admin/users/{id} id',
        'DELETE /api/admin/exposures/{id} id',
      ]),
    );
  });
});
