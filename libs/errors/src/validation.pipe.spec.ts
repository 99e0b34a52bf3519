import type { ValidationError } from '@nestjs/common';
import { RequestValidationPipe, toFieldProblems } from './validation.pipe';

function error(
  property: string,
  constraints?: Record<string, string>,
  children: ValidationError[] = [],
): ValidationError {
  return { property, constraints, children };
}

describe('toFieldProblems', () => {
  it('gives one problem per failed constraint, without repeating the property name', () => {
    expect(
      toFieldProblems([
        error('page', {
          min: 'page must not be less than 1',
          isInt: 'page must be an integer number',
        }),
        error('q', { custom: 'text of a custom message' }),
      ]),
    ).toEqual([
      { parameter: 'page', message: 'must not be less than 1' },
      { parameter: 'page', message: 'must be an integer number' },
      { parameter: 'q', message: 'text of a custom message' },
    ]);
  });

  it('only strips the name when it is a whole word at the start', () => {
    expect(toFieldProblems([error('page', { x: 'pages must be fewer' })])).toEqual([
      { parameter: 'page', message: 'pages must be fewer' },
    ]);
  });

  it('walks nested objects and arrays with dotted paths', () => {
    const nested = error('address', undefined, [
      error('city', { isString: 'city must be a string' }),
      error('lines', undefined, [error('0', { isString: '0 must be a string' })]),
    ]);
    expect(toFieldProblems([nested])).toEqual([
      { parameter: 'address.city', message: 'must be a string' },
      { parameter: 'address.lines.0', message: 'must be a string' },
    ]);
  });

  it('keeps a parent problem and its children', () => {
    const both = error('tags', { arrayMaxSize: 'tags must contain no more than 2 elements' }, [
      error('1', { isString: '1 must be a string' }),
    ]);
    expect(toFieldProblems([both], 'body')).toEqual([
      { parameter: 'body.tags', message: 'must contain no more than 2 elements' },
      { parameter: 'body.tags.1', message: 'must be a string' },
    ]);
  });

  it('names body problems as fields, an undeclared one as unknown, a list item by its index', () => {
    expect(
      toFieldProblems(
        [
          error('api_key', { whitelistValidation: 'property api_key should not exist' }),
          error('groups', { catalogInput: '[1] must not be empty' }),
        ],
        '',
        'field',
      ),
    ).toEqual([
      { field: 'api_key', message: 'unknown field' },
      { field: 'groups[1]', message: 'must not be empty' },
    ]);
  });

  it('is empty for no errors', () => {
    expect(toFieldProblems([])).toEqual([]);
  });
});

describe('RequestValidationPipe', () => {
  it('hands a custom parameter that is no DTO over as it is, even a circular one', async () => {
    const manager: Record<string, unknown> = {};
    manager.self = { manager, list: [manager] };
    const pipe = new RequestValidationPipe();
    for (const metatype of [Function, Object, undefined])
      await expect(pipe.transform(manager, { type: 'custom', metatype })).resolves.toBe(manager);
  });
});
