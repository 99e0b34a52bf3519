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

/** Flattens class-validator's tree into one problem per failed constraint, with dotted paths. */
export function toFieldProblems(errors: ValidationError[], prefix = ''): FieldProblem[] {
  return errors.flatMap((error) => {
    const path = prefix ? `${prefix}.${error.property}` : error.property;
    const own = Object.values(error.constraints ?? {}).map((message) => ({
      parameter: path,
      message: message.startsWith(error.property + ' ')
        ? message.slice(error.property.length + 1)
        : message,
    }));
    return [...own, ...toFieldProblems(error.children ?? [], path)];
  });
}

const common: ValidationPipeOptions = {
  transform: true,
  whitelist: true,
  // A parameter decorator that hands over request input (e.g. a part of the query string
  // read only for some callers) is validated like @Query(); the principal's type is no class.
  validateCustomDecorators: true,
  validationError: { target: false, value: false },
  exceptionFactory: (errors) => new ValidationFailedError(toFieldProblems(errors)),
};

/**
 * DTO validation with every problem reported at once. Bodies refuse unknown fields; query
 * strings drop them silently, because clients legitimately send extras such as `API_KEY`.
 */
@Injectable()
export class RequestValidationPipe implements PipeTransform {
  private readonly strict = new ValidationPipe({ ...common, forbidNonWhitelisted: true });
  private readonly lenient = new ValidationPipe({ ...common, forbidNonWhitelisted: false });

  transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const pipe = metadata.type === 'body' ? this.strict : this.lenient;
    return pipe.transform(value, metadata) as Promise<unknown>;
  }
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
