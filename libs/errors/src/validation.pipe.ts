import {
  ArgumentMetadata,
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
