import { registerDecorator } from 'class-validator';
import { isSafeSegment } from './safe-segment';

/** Validates an id that becomes a storage path segment (the contract's pattern). */
export function IsSafeSegment(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) => {
    registerDecorator({
      name: 'isSafeSegment',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => isSafeSegment(value),
        defaultMessage: () =>
          'must be a single safe path segment: ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$',
      },
    });
  };
}
