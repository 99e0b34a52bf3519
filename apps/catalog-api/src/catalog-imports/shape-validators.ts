import { isCalendarDate } from '@app/platform';

/**
 * The import documents' validator, kept instead of DTO classes (which every other route's input
 * uses): class-validator took about 7 times as long on 50,000 partner records (5 to 7 s against
 * 0.7 to 1.1 s), and a document's problems are reported per item (`index`) with exact paths
 * (`data_declarations[0].use_conditions[1].use_class`), field aliases and ignored ELU fields.
 */
export interface ShapeProblem {
  path: string;
  message: string;
}

export interface Shape<T> {
  parse(value: unknown, path: string, problems: ShapeProblem[]): T | undefined;
  /**
   * What a leaf accepts, for the tests that generate documents from the shapes (records and
   * lists show theirs as `fields` and `item`).
   */
  accepts?: Accepts;
}

/** The rule of a leaf shape, as its constructor was given it. */
export type Accepts =
  | ({ kind: 'text'; nullable: boolean } & TextOptions)
  | { kind: 'bool'; nullable: boolean }
  | { kind: 'integer'; min: number; max: number }
  | { kind: 'date' }
  | { kind: 'oneOf'; values: readonly string[]; nullable: boolean }
  | { kind: 'jsonObjectText' }
  | { kind: 'idOrName' };

const join = (path: string, key: string): string => (path === '' ? key : `${path}.${key}`);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function nullable<T>(allowNull: boolean | undefined, inner: Shape<T>): Shape<T | null> {
  return {
    accepts: inner.accepts,
    parse(value, path, problems) {
      if (value === null) {
        if (allowNull) return null;
        problems.push({ path, message: 'must not be null' });
        return undefined;
      }
      return inner.parse(value, path, problems);
    },
  };
}

export interface TextOptions {
  max?: number;
  /** Whitespace-only is refused (names, keys); trimmed before use. */
  nonEmpty?: boolean;
  pattern?: RegExp;
  patternMessage?: string;
}

export function text(options: TextOptions & { nullable: true }): Shape<string | null>;
export function text(options?: TextOptions & { nullable?: false }): Shape<string>;
export function text(options: TextOptions & { nullable?: boolean } = {}): Shape<string | null> {
  return nullable(options.nullable, {
    accepts: { ...options, kind: 'text', nullable: options.nullable === true },
    parse(value, path, problems) {
      if (typeof value !== 'string') {
        problems.push({ path, message: `must be a string, not ${describe(value)}` });
        return undefined;
      }
      const trimmed = options.nonEmpty ? value.trim() : value;
      if (options.nonEmpty && trimmed === '') {
        problems.push({ path, message: 'must not be empty' });
        return undefined;
      }
      if (options.max !== undefined && trimmed.length > options.max) {
        problems.push({ path, message: `must be at most ${options.max} characters` });
        return undefined;
      }
      if (options.pattern !== undefined && !options.pattern.test(trimmed)) {
        problems.push({ path, message: options.patternMessage ?? 'has an invalid format' });
        return undefined;
      }
      return trimmed;
    },
  });
}

export function bool(options: { nullable: true }): Shape<boolean | null>;
export function bool(options?: { nullable?: false }): Shape<boolean>;
export function bool(options: { nullable?: boolean } = {}): Shape<boolean | null> {
  return nullable(options.nullable, {
    accepts: { kind: 'bool', nullable: options.nullable === true },
    parse(value, path, problems) {
      if (typeof value === 'boolean') return value;
      problems.push({ path, message: `must be true or false, not ${describe(value)}` });
      return undefined;
    },
  });
}

export function integer(options: { min?: number; max?: number } = {}): Shape<number> {
  const min = options.min ?? 1;
  const max = options.max ?? 2_147_483_647;
  return {
    accepts: { kind: 'integer', min, max },
    parse(value, path, problems) {
      if (typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max) {
        return value;
      }
      problems.push({ path, message: `must be an integer between ${min} and ${max}` });
      return undefined;
    },
  };
}

/** A calendar date `YYYY-MM-DD` (the day must exist). */
export function date(): Shape<string | null> {
  return nullable(true, {
    accepts: { kind: 'date' },
    parse(value, path, problems) {
      if (isCalendarDate(value)) return value;
      problems.push({ path, message: 'must be a date YYYY-MM-DD' });
      return undefined;
    },
  });
}

export function oneOf<V extends string>(
  values: readonly V[],
  options: { nullable: true },
): Shape<V | null>;
export function oneOf<V extends string>(
  values: readonly V[],
  options?: { nullable?: false },
): Shape<V>;
export function oneOf<V extends string>(
  values: readonly V[],
  options: { nullable?: boolean } = {},
): Shape<V | null> {
  return nullable(options.nullable, {
    accepts: { kind: 'oneOf', values, nullable: options.nullable === true },
    parse(value, path, problems) {
      if (typeof value === 'string' && (values as readonly string[]).includes(value)) {
        return value as V;
      }
      problems.push({ path, message: `must be one of: ${values.join(', ')}` });
      return undefined;
    },
  });
}

/** A JSON-encoded object, as `metadata` is exported; an object is accepted and encoded. */
export function jsonObjectText(): Shape<string> {
  return {
    accepts: { kind: 'jsonObjectText' },
    parse(value, path, problems) {
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
        return JSON.stringify(value);
      }
      if (typeof value === 'string') {
        try {
          const parsed: unknown = JSON.parse(value);
          if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return value;
        } catch {
          // reported below
        }
      }
      problems.push({ path, message: 'must be a JSON object encoded as a string' });
      return undefined;
    },
  };
}

/** A list's shape keeps its item's, for the tests that hold the documents' OpenAPI to it. */
export interface ListShape<T> extends Shape<T[]> {
  item: Shape<T>;
}

export function list<T>(item: Shape<T>, options: { max?: number } = {}): ListShape<T> {
  return {
    item,
    parse(value, path, problems) {
      if (!Array.isArray(value)) {
        problems.push({ path, message: `must be an array, not ${describe(value)}` });
        return undefined;
      }
      if (options.max !== undefined && value.length > options.max) {
        problems.push({ path, message: `must have at most ${options.max} entries` });
        return undefined;
      }
      const before = problems.length;
      const parsed = value.map((entry, i) => item.parse(entry, `${path}[${i}]`, problems));
      return problems.length === before ? (parsed as T[]) : undefined;
    },
  };
}

/** An integer id or a string (name or accession), e.g. cohort institutes. */
export function idOrName(): Shape<number | string> {
  return {
    accepts: { kind: 'idOrName' },
    parse(value, path, problems) {
      if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
      if (typeof value === 'string' && value.trim() !== '') return value.trim();
      problems.push({ path, message: 'must be a positive integer id or a name' });
      return undefined;
    },
  };
}

export interface FieldSpec<T> {
  shape: Shape<T>;
  required?: boolean;
  /** Other names the same field has in ELU documents; the first one present is used. */
  aliases?: string[];
}

type Parsed<F> = { [K in keyof F]: F[K] extends FieldSpec<infer T> ? T | undefined : never };

export function field<T>(shape: Shape<T>, extra: Omit<FieldSpec<T>, 'shape'> = {}): FieldSpec<T> {
  return { shape, ...extra };
}

/**
 * An object with known fields: unknown fields are problems, `ignored` ones (derived keys such
 * as `source`) are dropped silently, absent optional fields come out as undefined.
 */
/** A record's shape keeps its fields, for the tests that hold the OpenAPI to it. */
export interface RecordShape<F extends Record<string, FieldSpec<unknown>>> extends Shape<
  Parsed<F>
> {
  fields: F;
  ignored: readonly string[];
}

export function record<F extends Record<string, FieldSpec<unknown>>>(
  fields: F,
  options: { ignored?: readonly string[] } = {},
): RecordShape<F> {
  const ignored = new Set(options.ignored ?? []);
  const known = new Set<string>();
  for (const [name, spec] of Object.entries(fields)) {
    known.add(name);
    for (const alias of spec.aliases ?? []) known.add(alias);
  }
  return {
    fields,
    ignored: [...ignored],
    parse(value, path, problems) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) {
        problems.push({ path, message: `must be an object, not ${describe(value)}` });
        return undefined;
      }
      const input = value as Record<string, unknown>;
      const before = problems.length;
      for (const key of Object.keys(input)) {
        if (!known.has(key) && !ignored.has(key)) {
          problems.push({ path: join(path, key), message: 'unknown field' });
        }
      }
      const out: Record<string, unknown> = {};
      for (const [name, spec] of Object.entries(fields)) {
        const key = [name, ...(spec.aliases ?? [])].find((k) => input[k] !== undefined);
        if (key === undefined) {
          if (spec.required) problems.push({ path: join(path, name), message: 'is required' });
          continue;
        }
        out[name] = spec.shape.parse(input[key], join(path, key), problems);
      }
      return problems.length === before ? (out as Parsed<F>) : undefined;
    },
  };
}
