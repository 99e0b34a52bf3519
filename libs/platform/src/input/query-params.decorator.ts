import type { ApiPropertyOptions } from '@nestjs/swagger';
import { InputProperty, refuse } from './input-property.decorator';

/** Property decorators of query and path DTOs (see InputProperty). */

type Reader = (raw: string) => unknown;

export const MAX_INT = 2_147_483_647;
export const UUID_PATTERN =
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** A query or path parameter: one plain string, else refused before `read`. */
const InputParam = (doc: ApiPropertyOptions, read: Reader, required = false) =>
  InputProperty(
    doc,
    (value) =>
      typeof value === 'string' ? read(value) : refuse('must be given once, as a plain value'),
    required,
  );

/**
 * A positive integer up to `max`, by default the Postgres `integer` range (a larger id cannot
 * exist).
 */
const readPositiveInt =
  (max: number): Reader =>
  (raw) =>
    /^[1-9][0-9]{0,9}$/.test(raw) && Number(raw) <= max
      ? Number(raw)
      : refuse(
          max === MAX_INT ? 'must be a positive integer' : `must be an integer from 1 to ${max}`,
        );

const readText =
  (maxLength: number): Reader =>
  (raw) =>
    raw.length > 0 && raw.length <= maxLength
      ? raw
      : refuse(`must be 1 to ${maxLength} characters long`);

/** `max` lowers the bound (a page size); `default` is what an absent parameter means. */
export const PositiveIntParam = (
  description: string,
  required = false,
  { max = MAX_INT, default: fallback }: { max?: number; default?: number } = {},
) =>
  InputParam(
    { type: 'integer', minimum: 1, maximum: max, default: fallback, description },
    readPositiveInt(max),
    required,
  );

export const TextParam = (description: string, maxLength: number, required = false) =>
  InputParam(
    { type: 'string', minLength: 1, maxLength, description },
    readText(maxLength),
    required,
  );

/** A path segment: never empty, so only its length is checked. */
export const PathTextParam = (description: string, maxLength: number) =>
  InputParam(
    { type: 'string', minLength: 1, maxLength, description },
    (raw) => (raw.length <= maxLength ? raw : refuse(`must be at most ${maxLength} characters`)),
    true,
  );

export const BooleanParam = (description: string) =>
  InputParam({ type: 'boolean', description }, (raw) =>
    raw === 'true' ? true : raw === 'false' ? false : refuse('must be true or false'),
  );

export const UuidParam = (description: string) =>
  InputParam(
    { type: 'string', format: 'uuid', pattern: UUID_PATTERN.source, description },
    (raw) => (UUID_PATTERN.test(raw) ? raw : refuse('must be a UUID')),
  );

/** A string matching `pattern`, converted by `convert` (undefined = refused with `message`). */
export const PatternParam = (
  doc: { description: string; pattern: RegExp; example: string },
  message: string,
  convert: (raw: string) => unknown = (raw) => (doc.pattern.test(raw) ? raw : undefined),
) =>
  InputParam(
    {
      type: 'string',
      description: doc.description,
      pattern: doc.pattern.source,
      example: doc.example,
    },
    (raw) => convert(raw) ?? refuse(message),
  );

/** One of `values`. */
export const OneOfParam = (description: string, values: readonly string[]) =>
  InputParam({ enum: [...values], description }, (raw) =>
    values.includes(raw) ? raw : refuse(`must be one of: ${values.join(', ')}`),
  );

/**
 * `?fields=a,b`: a comma-separated, non-empty subset of `allowed`, in the order given and
 * without duplicates. `style`/`explode` are OpenAPI parameter keys that ApiProperty's type
 * does not list; swagger copies them onto the parameter.
 */
export const FieldsParam = (allowed: readonly string[], note = '') =>
  InputParam(
    {
      description: `Comma-separated keys to keep; any other name is a 400.${note ? ` ${note}` : ''}`,
      enum: [...allowed],
      isArray: true,
      minItems: 1,
      style: 'form',
      explode: false,
    } as ApiPropertyOptions,
    (raw) => {
      const names = raw
        .split(',')
        .map((name) => name.trim())
        .filter((name) => name.length > 0);
      const unknown = names.filter((name) => !allowed.includes(name));
      if (names.length > 0 && unknown.length === 0) return [...new Set(names)];
      const detail = unknown.length > 0 ? `unknown field(s) ${unknown.join(', ')}; ` : '';
      return refuse(`${detail}must be a comma-separated list of: ${allowed.join(', ')}`);
    },
  );
