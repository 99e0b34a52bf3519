import { applyDecorators } from '@nestjs/common';
import { ApiProperty } from '@nestjs/swagger';
import { registerDecorator } from 'class-validator';
import { isSafeSegment, SAFE_SEGMENT } from './safe-segment';

/**
 * Validates and documents an id that becomes a storage path segment (the contract's pattern).
 * `required` is the OpenAPI flag; a required property also needs `@IsDefined()`.
 */
export function IsSafeSegment(doc: { required: boolean; description?: string }): PropertyDecorator {
  const check: PropertyDecorator = (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isSafeSegment',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => isSafeSegment(value),
        defaultMessage: () => `must be a single safe path segment: ${SAFE_SEGMENT.source}`,
      },
    });
  };
  return applyDecorators(
    ApiProperty({ type: String, pattern: SAFE_SEGMENT.source, ...doc }),
    check,
  );
}
