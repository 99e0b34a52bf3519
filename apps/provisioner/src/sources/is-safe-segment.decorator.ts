import { registerDecorator } from 'class-validator';
import { isSafeSegment, SAFE_SEGMENT } from './safe-segment';

/** Validates an id that becomes a storage path segment (the contract's pattern). */
export function IsSafeSegment(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
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
}
