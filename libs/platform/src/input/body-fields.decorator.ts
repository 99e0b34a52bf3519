import type { ApiPropertyOptions } from '@nestjs/swagger';
import { InputProperty, refuse, Refused } from './input-property.decorator';

/** Property decorators of JSON body DTOs (see InputProperty). */

type Read = (value: unknown) => unknown;

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

interface FieldOptions {
  required?: boolean;
  nullable?: boolean;
  description?: string;
}

const nullable =
  (allowNull: boolean | undefined, read: Read): Read =>
  (value) => {
    if (value !== null) return read(value);
    return allowNull ? null : refuse('must not be null');
  };

const field = (doc: ApiPropertyOptions, options: FieldOptions, read: Read) =>
  InputProperty(
    { ...doc, nullable: options.nullable, description: options.description },
    nullable(options.nullable, read),
    options.required,
  );

export interface TextOptions extends FieldOptions {
  max?: number;
  /** Whitespace-only is refused (names, keys); trimmed before use. */
  nonEmpty?: boolean;
  pattern?: RegExp;
  patternMessage?: string;
  format?: string;
}

function readText(options: TextOptions): Read {
  return (value) => {
    if (typeof value !== 'string') return refuse(`must be a string, not ${describe(value)}`);
    const text = options.nonEmpty ? value.trim() : value;
    if (options.nonEmpty && text === '') return refuse('must not be empty');
    if (options.max !== undefined && text.length > options.max) {
      return refuse(`must be at most ${options.max} characters`);
    }
    if (options.pattern !== undefined && !options.pattern.test(text)) {
      return refuse(options.patternMessage ?? 'has an invalid format');
    }
    return text;
  };
}

const textDoc = (options: TextOptions): ApiPropertyOptions => ({
  type: 'string',
  maxLength: options.max,
  minLength: options.nonEmpty ? 1 : undefined,
  pattern: options.pattern?.source,
  format: options.format,
});

export const TextField = (options: TextOptions = {}) =>
  field(textDoc(options), options, readText(options));

/** A list of texts, each checked as `item`; a bad item is named by its index. */
export const TextListField = (item: TextOptions, options: FieldOptions & { max?: number } = {}) => {
  const readItem = readText(item);
  return field(
    { type: 'array', items: textDoc(item), maxItems: options.max } as ApiPropertyOptions,
    options,
    (value) => {
      if (!Array.isArray(value)) return refuse(`must be an array, not ${describe(value)}`);
      if (options.max !== undefined && value.length > options.max) {
        return refuse(`must have at most ${options.max} entries`);
      }
      const read = value.map(readItem);
      const bad = read.findIndex((entry) => entry instanceof Refused);
      // "[i] message": the pipe names the item (`groups[1]`).
      return bad === -1 ? read : refuse(`[${bad}] ${(read[bad] as Refused).message}`);
    },
  );
};

export const BooleanField = (options: FieldOptions = {}) =>
  field({ type: 'boolean' }, options, (value) =>
    typeof value === 'boolean' ? value : refuse(`must be true or false, not ${describe(value)}`),
  );

export const IntegerField = (options: FieldOptions & { min?: number; max?: number } = {}) => {
  const min = options.min ?? 1;
  const max = options.max ?? 2_147_483_647;
  return field({ type: 'integer', minimum: min, maximum: max }, options, (value) =>
    typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max
      ? value
      : refuse(`must be an integer between ${min} and ${max}`),
  );
};

export const OneOfField = (values: readonly string[], options: FieldOptions = {}) =>
  field({ type: 'string', enum: [...values] }, options, (value) =>
    typeof value === 'string' && values.includes(value)
      ? value
      : refuse(`must be one of: ${values.join(', ')}`),
  );

/** An integer id or a string (name or accession). */
export const IdOrNameField = (options: FieldOptions = {}) =>
  field(
    {
      oneOf: [
        { type: 'integer', minimum: 1 },
        { type: 'string', minLength: 1 },
      ],
    },
    options,
    (value) => {
      if (typeof value === 'number' && Number.isInteger(value) && value > 0) return value;
      if (typeof value === 'string' && value.trim() !== '') return value.trim();
      return refuse('must be a positive integer id or a name');
    },
  );
