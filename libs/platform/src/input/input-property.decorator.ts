import { applyDecorators } from '@nestjs/common';
import { ApiProperty, type ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { registerDecorator } from 'class-validator';

/** A value that failed its check: the validator reports its message. */
export class Refused {
  constructor(readonly message: string) {}
}

export const refuse = (message: string) => new Refused(message);

/**
 * One DTO property of a route's input, declared once: its OpenAPI schema (`doc`), its
 * conversion and check (`read`: the value, or `refuse(message)`) and whether it is required.
 * One message per property, in the contract's wording; the global pipe lists every property
 * that fails.
 */
export function InputProperty(
  doc: ApiPropertyOptions,
  read: (value: unknown) => unknown,
  required = false,
): PropertyDecorator {
  const check: PropertyDecorator = (target, property) =>
    registerDecorator({
      name: 'input',
      target: target.constructor,
      propertyName: String(property),
      validator: {
        validate: (value: unknown) =>
          value === undefined ? !required : !(value instanceof Refused),
        defaultMessage: (args) =>
          args?.value instanceof Refused ? args.value.message : 'is required',
      },
    });
  return applyDecorators(
    ApiProperty({ ...doc, required } as ApiPropertyOptions),
    Transform(({ value }: { value: unknown }) => (value === undefined ? undefined : read(value))),
    check,
  );
}
