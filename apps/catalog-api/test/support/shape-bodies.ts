import type {
  Accepts,
  FieldSpec,
  ListShape,
  RecordShape,
  Shape,
} from '../../src/catalog-imports/shape-validators';

/** A seeded pseudo-random source (mulberry32): the same seed, the same documents. */
export class Random {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  int(max: number): number {
    return Math.floor(this.next() * max);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(values: readonly T[]): T {
    return values[this.int(values.length)];
  }
}

/**
 * Values a field may take that name other records (a partner, a project, a cohort...), by the
 * field's path in an item (`contacts[].affiliations`, `project`): a generated document names
 * existing records most of the time, so most documents are accepted and their exports checked.
 */
export type References = Record<string, () => unknown>;

/** Texts that have broken exports and parsers before: edges of length, space and Unicode. */
const ODD_TEXTS = [
  '',
  ' ',
  '  padded  ',
  'a',
  'Ünïcödé — 数据集 🧬',
  'line\nbreak\ttab',
  'quote " backslash \\ slash /',
  '<b>markup</b> & entities &amp;',
  '\u2028\u2029',
  'e\u0301',
  '0',
  'null',
];

function text(rng: Random, accepts: Extract<Accepts, { kind: 'text' }>): string {
  if (accepts.pattern !== undefined) {
    // A value the pattern takes, else an odd one (refused: the document is skipped).
    const candidates = [
      'x@lcsb.example',
      'first.last@uni.lu',
      'a@b',
      'LU',
      'DE',
      crypto.randomUUID(),
      'ELU_I_1',
      `word${rng.int(1000)}`,
    ].filter((c) => accepts.pattern!.test(c));
    return candidates.length > 0 ? rng.pick(candidates) : rng.pick(ODD_TEXTS);
  }
  const max = accepts.max ?? 2000;
  switch (rng.int(5)) {
    case 0:
      return rng.pick(ODD_TEXTS);
    case 1:
      // Exactly the longest allowed, in characters that are several bytes each.
      return '数'.repeat(Math.min(max, 300));
    case 2:
      return `${rng.pick(ODD_TEXTS)} ${rng.int(1_000_000)}`;
    default:
      return `text ${rng.int(1_000_000).toString(36)}`;
  }
}

/** A text of at most `max` characters, odd or plain, as a text shape gets (for bodies of DTOs). */
export function someText(rng: Random, max: number): string {
  return text(rng, { kind: 'text', nullable: false, max });
}

export function date(rng: Random): string {
  return rng.pick(['2026-02-28', '2024-02-29', '0001-01-01', '9999-12-31', '2030-06-15']);
}

/** A value for a leaf shape; sometimes null where the shape allows it. */
function leaf(rng: Random, accepts: Accepts | undefined): unknown {
  if (accepts === undefined) return rng.pick(ODD_TEXTS);
  switch (accepts.kind) {
    case 'text':
      return accepts.nullable && rng.chance(0.2) ? null : text(rng, accepts);
    case 'bool':
      return accepts.nullable && rng.chance(0.2) ? null : rng.chance(0.5);
    case 'integer':
      return rng.pick([accepts.min, accepts.min + rng.int(5)]);
    case 'date':
      return rng.chance(0.2) ? null : date(rng);
    case 'oneOf':
      return accepts.nullable && rng.chance(0.2) ? null : rng.pick(accepts.values);
    case 'jsonObjectText':
      return rng.pick(['{}', '{"a":1}', JSON.stringify({ note: rng.pick(ODD_TEXTS) })]);
    case 'idOrName':
      return `name ${rng.int(10)}`;
  }
}

function isRecord(shape: Shape<unknown>): shape is RecordShape<Record<string, FieldSpec<unknown>>> {
  return 'fields' in shape;
}

function isList(shape: Shape<unknown>): shape is ListShape<unknown> {
  return 'item' in shape;
}

/** A value for any shape, nested records and lists included (0-3 entries a list). */
export function generate(
  shape: Shape<unknown>,
  rng: Random,
  references: References,
  path = '',
): unknown {
  const reference = references[path];
  if (reference !== undefined && rng.chance(0.85)) return reference();
  if (isRecord(shape)) {
    const value: Record<string, unknown> = {};
    for (const [field, spec] of Object.entries(shape.fields)) {
      // Optional fields are left out as often as not; an alias stands in for the name sometimes.
      if (!spec.required && rng.chance(0.45)) continue;
      const key = spec.aliases !== undefined && rng.chance(0.2) ? rng.pick(spec.aliases) : field;
      value[key] = generate(spec.shape, rng, references, path === '' ? field : `${path}.${field}`);
    }
    return value;
  }
  if (isList(shape))
    return Array.from({ length: rng.int(4) }, () =>
      generate(shape.item, rng, references, `${path}[]`),
    );
  return leaf(rng, shape.accepts);
}
