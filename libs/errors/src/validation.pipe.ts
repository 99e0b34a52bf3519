import {
  ArgumentMetadata,
  Type,
  Injectable,
  PipeTransform,
  ValidationError,
  ValidationPipe,
  ValidationPipeOptions,
} from '@nestjs/common';
import { FieldProblem } from './app-error';
import { ValidationFailedError } from './http-errors';

/** Where a problem is: a query or path `parameter`, or a `field` of a JSON body. */
export type ProblemKey = 'parameter' | 'field';

/** class-validator's message for a body field the DTO does not declare. */
const UNKNOWN = 'whitelistValidation';
/** A message that starts with `[i] ` is about item `i` of the property's list. */
const ITEM = /^(\[\d+\]) (.*)$/s;

/** Flattens class-validator's tree into one problem per failed constraint, with dotted paths. */
export function toFieldProblems(
  errors: ValidationError[],
  prefix = '',
  key: ProblemKey = 'parameter',
): FieldProblem[] {
  return errors.flatMap((error) => {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.entries(error.constraints ?? {}).map(([constraint, text]) => {
      const message = text.startsWith(error.property + ' ')
        ? text.slice(error.property.length + 1)
        : text;
      if (constraint === UNKNOWN) return { [key]: path, message: 'unknown field' };
      const item = ITEM.exec(message);
      return item === null
        ? { [key]: path, message }
        : { [key]: `${path}${item[1]}`, message: item[2] };
    });
    return [...own, ...toFieldProblems(error.children ?? [], path, key)];
  });
}

const common: ValidationPipeOptions = {
  transform: true,
  whitelist: true,
  // A parameter decorator that hands over request input (e.g. a part of the query string
  // read only for some callers) is validated like @Query(); the principal's type is no class.
  validateCustomDecorators: true,
  validationError: { target: false, value: false },
};

function describe(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : `a ${typeof value}`;
}

/**
 * DTO validation with every problem reported at once. Bodies refuse unknown fields; query
 * strings drop them silently, because clients legitimately send extras such as `API_KEY`.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly strict = new ValidationPipe({
    ...common,
    forbidNonWhitelisted: true,
    exceptionFactory: (errors) => new ValidationFailedError(toFieldProblems(errors, '', 'field')),
  });
  private readonly lenient = new ValidationPipe({
    ...common,
    forbidNonWhitelisted: false,
    exceptionFactory: (errors) => new ValidationFailedError(toFieldProblems(errors)),
  });

  transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // A custom parameter that is no DTO (the principal, a transaction's EntityManager) is no
    // input: walked by the pipe, a circular value such as an EntityManager overflows the stack.
    if (metadata.type === 'custom' && !isDto(metadata)) return Promise.resolve(value);
    if (metadata.type !== 'body')
      return this.lenient.transform(value, metadata) as Promise<unknown>;
    // The framework would validate an array body item by item against the DTO's fields.
    const isObject = typeof value === 'object' && value !== null && !Array.isArray(value);
    if (isDto(metadata) && value !== undefined && !isObject) {
      throw new ValidationFailedError([{ message: `must be an object, not ${describe(value)}` }]);
    }
    return this.body(value, metadata);
  }

  /**
   * The framework resolves a handler's arguments together and answers the first failure; a
   * bad path id must be that 400 even when the body is bad too, so bodies wait one turn of the
   * event loop, after every path and query check (microtasks only) has settled.
   */
  private async body(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    await new Promise((resolve) => setImmediate(resolve));
    return this.strict.transform(value, metadata) as Promise<unknown>;
  }
}

/**
 * A class of our own, not `Object`, `String`… (which the framework does not validate), nor
 * `Function`: what the compiler records for a type imported with `import type` under
 * isolatedModules (e.g. TypeORM's EntityManager).
 */
function isDto({ metatype }: ArgumentMetadata): boolean {
  return (
    metatype !== undefined &&
    ![Object, String, Number, Boolean, Array, Function].includes(metatype as never)
  );
}

const shared = new RequestValidationPipe();

/**
 * Input that does not come through a route (command-line options) checked against a route's
 * DTO, with the same conversions and the same 400 listing every problem.
 */
export async function validateInput<T extends object>(
  dto: Type<T>,
  plain: Record<string, unknown>,
  type: 'query' | 'param' | 'body' = 'query',
): Promise<T> {
  return (await shared.transform(plain, { type, metatype: dto })) as T;
}
