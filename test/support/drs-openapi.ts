import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import Ajv, { type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

/** The DRS 1.5.0 reference copy (never copied into the project). */
export const DRS_REFERENCE = resolve(__dirname, '../../../shared/reference/drs');
const SERVICE_INFO_URL =
  'https://raw.githubusercontent.com/ga4gh-discovery/ga4gh-service-info/v1.0.0/service-info.yaml';

/**
 * The DRS OpenAPI document's `$ref`s resolved offline: relative files of the reference copy, and
 * the service-info document it names by URL mapped to its copy beside it (the README there).
 */
function resolveRefs(node: unknown, file: string, seen: string[] = []): unknown {
  if (Array.isArray(node)) return node.map((item) => resolveRefs(item, file, seen));
  if (node === null || typeof node !== 'object') return node;
  const ref = (node as { $ref?: unknown }).$ref;
  if (typeof ref === 'string') {
    const [target, pointer = ''] = ref.split('#');
    const path = target.startsWith(SERVICE_INFO_URL)
      ? join(DRS_REFERENCE, 'service-info-1.0.0/service-info.yaml')
      : target === ''
        ? file
        : resolve(dirname(file), target);
    const key = `${path}#${pointer}`;
    // A recursive schema (ContentsObject's `contents`, bundles, which this service never
    // serves): its inner repetition accepts anything.
    if (seen.includes(key)) return {};
    let value: unknown = parse(readFileSync(path, 'utf8'));
    for (const part of pointer.split('/').filter((p) => p !== '')) {
      value = (value as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return resolveRefs(value, path, [...seen, key]);
  }
  return Object.fromEntries(
    Object.entries(node).map(([name, value]) => [name, resolveRefs(value, file, seen)]),
  );
}

type Operation = { responses: Record<string, { content?: Record<string, { schema: object }> }> };

/**
 * Validators of DRS answers against the specification (ajv, from the npm registry): `check(path,
 * method, status, body)` returns the schema's errors, [] when the body conforms.
 */
export function drsAnswerChecker() {
  const root = join(DRS_REFERENCE, 'openapi/data_repository_service.openapi.yaml');
  const document = parse(readFileSync(root, 'utf8')) as { paths: Record<string, unknown> };
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const compiled = new Map<string, ValidateFunction>();
  return (path: string, method: string, status: number, body: unknown): string[] => {
    const key = `${method} ${path} ${status}`;
    let validate = compiled.get(key);
    if (validate === undefined) {
      const item = resolveRefs(document.paths[path], root) as Record<string, Operation>;
      const schema = item[method]?.responses[String(status)]?.content?.['application/json']?.schema;
      if (schema === undefined) return [`the specification has no ${key} answer`];
      validate = ajv.compile(schema);
      compiled.set(key, validate);
    }
    return validate(body)
      ? []
      : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message ?? ''}`);
  };
}
