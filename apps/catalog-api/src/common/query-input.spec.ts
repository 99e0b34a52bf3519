import { ValidationFailedError, validateInput } from '@app/errors';
import { FieldsParam, PositiveIntParam, TextListField } from '@app/platform';
import { ExactFiltersQuery, exactValues } from './query-input';
import { idFilter, textFilter } from './exact-filters.sql';

const FILTERS = [idFilter('x.id'), textFilter(['title', 'name'], 'x.title', 5)];

class ExampleQuery extends ExactFiltersQuery(FILTERS) {
  @PositiveIntParam('page', true)
  page!: number;

  @FieldsParam(['a', 'b'])
  fields?: string[];
}

class ExampleBody {
  @TextListField({ nonEmpty: true, max: 3 })
  tags?: string[];
}

async function problems(run: () => Promise<unknown>): Promise<unknown[]> {
  const error = await run().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ValidationFailedError);
  return ((error as ValidationFailedError).more as { errors: unknown[] }).errors;
}

describe('query DTOs', () => {
  it('converts the given values and drops unknown parameters', async () => {
    const query = await validateInput(ExampleQuery, {
      page: '2',
      fields: 'b, a,b',
      id_at_source: '7',
      API_KEY: 'k',
    });
    expect(query).toEqual({ page: 2, fields: ['b', 'a'], id_at_source: 7 });
    expect(exactValues(query, FILTERS)).toEqual({ id_at_source: 7 });
  });

  it('lists every bad parameter, one message each, in the contract wording', async () => {
    const found = await problems(() =>
      validateInput(ExampleQuery, { fields: 'c', name: 'toolong', title: ['a', 'b'] }),
    );
    expect(found).toHaveLength(4);
    expect(found).toEqual(
      expect.arrayContaining([
        { parameter: 'title', message: 'must be given once, as a plain value' },
        { parameter: 'name', message: 'must be 1 to 5 characters long' },
        { parameter: 'page', message: 'is required' },
        {
          parameter: 'fields',
          message: 'unknown field(s) c; must be a comma-separated list of: a, b',
        },
      ]),
    );
  });

  it('refuses ids beyond the Postgres integer range', async () => {
    expect(await problems(() => validateInput(ExampleQuery, { page: '2147483648' }))).toEqual([
      { parameter: 'page', message: 'must be a positive integer' },
    ]);
  });
});

describe('body DTOs', () => {
  it('names a bad list item by its index and an undeclared field as unknown', async () => {
    expect(
      await problems(() => validateInput(ExampleBody, { tags: ['ok', ' '], extra: 1 }, 'body')),
    ).toEqual([
      { field: 'extra', message: 'unknown field' },
      { field: 'tags[1]', message: 'must not be empty' },
    ]);
  });

  it('trims texts that must not be empty', async () => {
    expect(await validateInput(ExampleBody, { tags: [' a '] }, 'body')).toEqual({ tags: ['a'] });
  });
});
