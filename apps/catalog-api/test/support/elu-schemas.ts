import Ajv, { type ValidateFunction } from 'ajv-draft-04';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Third-party schemas (AGPL): read from the shared reference, never copied into the repo. */
const SCHEMA_DIR = join(__dirname, '../../../../../shared/reference/daisy-json/schemas');
const SCHEMA_BASE =
  'https://raw.githubusercontent.com/elixir-luxembourg/json-schemas/v0.0.6/schemas/';

interface Schema {
  $id: string;
  definitions?: Record<string, { definitions?: Record<string, unknown> }>;
}

/**
 * elu-study.json refers to `#/definitions/term_set` but nests it one level deeper (under
 * `elu:study`), so no validator can resolve it; lift nested definitions to the top, in memory.
 */
function repairDanglingRefs(schema: Schema): Schema {
  const lifted: Record<string, unknown> = {};
  for (const definition of Object.values(schema.definitions ?? {})) {
    Object.assign(lifted, definition.definitions ?? {});
  }
  return { ...schema, definitions: { ...lifted, ...schema.definitions } } as Schema;
}

/** A validator for one ELU schema file (e.g. `elu-dataset.json`), v0.0.6, draft-04. */
export function eluValidatorFor(schema: string): ValidateFunction {
  const ajv = new Ajv({ allErrors: true, strict: false });
  // The two formats the schemas use, checked here rather than through another dependency.
  ajv.addFormat(
    'uri',
    (value: string) => URL.canParse(value) && /^[a-z][a-z0-9+.-]*:/i.test(value),
  );
  ajv.addFormat('email', /^[^\s@]+@[^\s@]+\.[^\s@]+$/);
  for (const file of readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.json'))) {
    // Draft-04 names a schema by `id`; these files use `$id`, so register them under it.
    const parsed = JSON.parse(readFileSync(join(SCHEMA_DIR, file), 'utf8')) as Schema;
    ajv.addSchema(repairDanglingRefs(parsed), parsed.$id);
  }
  const validate = ajv.getSchema(SCHEMA_BASE + schema);
  if (validate === undefined) throw new Error(`schema ${schema} not registered`);
  return validate;
}
