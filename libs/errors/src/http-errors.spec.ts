import { AppError } from './app-error';
import { fromBodyParserError } from './body-parser-errors';
import { CappedProblems, MAX_REPORTED_PROBLEMS } from './capped-problems';
import {
  BadRequestError,
  ForbiddenError,
  MethodNotAllowedError,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  ValidationFailedError,
} from './http-errors';

describe('error classes', () => {
  it('carry a status, a stable code and the envelope', () => {
    const error = new BadRequestError('Bad thing', { hint: 'x' });
    expect(error).toBeInstanceOf(AppError);
    expect(error.name).toBe('BadRequestError');
    expect([error.status, error.code, error.description]).toEqual([
      400,
      'bad_request',
      'Bad thing',
    ]);
    expect(error.toEnvelope()).toEqual({
      status: 'Error',
      description: 'Bad thing',
      more: { hint: 'x' },
    });
  });

  it('default more to an empty object', () => {
    expect(new NotFoundError().toEnvelope()).toEqual({
      status: 'Error',
      description: 'Not found',
      more: {},
    });
    expect(new ForbiddenError().toEnvelope().more).toEqual({});
    expect(new ServiceUnavailableError('Down').status).toBe(503);
  });

  it('401 challenges for an API key', () => {
    expect(new UnauthorizedError().headers).toEqual({ 'WWW-Authenticate': 'ApiKey' });
    expect(new UnauthorizedError('Invalid token', 'Bearer').headers).toEqual({
      'WWW-Authenticate': 'Bearer',
    });
  });

  it('405 lists the allowed methods in Allow and in more', () => {
    const error = new MethodNotAllowedError(['GET', 'HEAD']);
    expect(error.headers).toEqual({ Allow: 'GET, HEAD' });
    expect(error.more).toEqual({ allowed: ['GET', 'HEAD'] });
  });

  it('413 says the limit only when known; 415 says what is expected', () => {
    expect(new PayloadTooLargeError().more).toEqual({});
    expect(new PayloadTooLargeError(1024).more).toEqual({ limit_bytes: 1024 });
    expect(new UnsupportedMediaTypeError().description).toBe(
      'Request body must be application/json',
    );
  });

  describe('ValidationFailedError', () => {
    it('names the one problem in its description', () => {
      expect(
        new ValidationFailedError([{ parameter: 'page', message: 'must be a positive integer' }])
          .description,
      ).toBe('Invalid page: must be a positive integer');
      expect(
        new ValidationFailedError([{ index: 0, field: 'name', message: 'is required' }])
          .description,
      ).toBe('Invalid item 0: name: is required');
      expect(
        new ValidationFailedError([{ index: 4, message: 'must be an object' }]).description,
      ).toBe('Invalid input: item 4: must be an object');
      expect(new ValidationFailedError([{ message: 'body must be an array' }]).description).toBe(
        'Invalid input: body must be an array',
      );
    });

    it('counts several problems and lists them all in more.errors', () => {
      const errors = [
        { parameter: 'page', message: 'a' },
        { parameter: 'fields', message: 'b' },
      ];
      const error = new ValidationFailedError(errors);
      expect(error.description).toBe('Invalid input: 2 problems');
      expect(error.toEnvelope().more).toEqual({ errors });
    });

    it('lists at most 1,000 problems and counts them all, from a list or a CappedProblems', () => {
      const many = Array.from({ length: 250_000 }, (_, index) => ({ index, message: 'bad' }));
      const capped = new CappedProblems();
      for (const problem of many) capped.add(problem);
      for (const error of [new ValidationFailedError(many), new ValidationFailedError(capped)]) {
        expect(error.description).toBe('Invalid input: 250000 problems');
        const more = error.toEnvelope().more as { errors: unknown[]; error_count: number };
        expect(more.errors).toEqual(many.slice(0, MAX_REPORTED_PROBLEMS));
        expect(more.error_count).toBe(250_000);
      }
      expect(capped.listed).toHaveLength(MAX_REPORTED_PROBLEMS);
      expect(MAX_REPORTED_PROBLEMS).toBe(1000);
    });

    it('takes an explicit description', () => {
      expect(new ValidationFailedError([], 'Nothing to import').description).toBe(
        'Nothing to import',
      );
    });
  });
});

describe('fromBodyParserError', () => {
  it('maps each body-parser failure to our error', () => {
    expect(fromBodyParserError({ type: 'entity.too.large', limit: 10 })).toEqual(
      new PayloadTooLargeError(10),
    );
    expect(fromBodyParserError({ type: 'entity.parse.failed' })?.description).toBe(
      'Malformed JSON body',
    );
    expect(fromBodyParserError({ type: 'charset.unsupported' })?.status).toBe(415);
    expect(fromBodyParserError({ type: 'encoding.unsupported' })?.status).toBe(415);
    expect(fromBodyParserError({ type: 'request.aborted' })?.description).toBe(
      'Request body incomplete',
    );
    expect(fromBodyParserError({ type: 'request.size.invalid' })?.status).toBe(400);
  });

  it('leaves everything else alone', () => {
    expect(fromBodyParserError(new Error('x'))).toBeUndefined();
    expect(fromBodyParserError({ type: 'something.else' })).toBeUndefined();
    expect(fromBodyParserError(null)).toBeUndefined();
    expect(fromBodyParserError('entity.too.large')).toBeUndefined();
  });
});
