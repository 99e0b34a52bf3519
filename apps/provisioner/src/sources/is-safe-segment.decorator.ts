import { InputProperty, refuse } from '@app/platform';
import { isSafeSegment, SAFE_SEGMENT } from './safe-segment';

/**
 * Validates and documents an id that becomes a storage path segment (the contract's pattern),
 * in a body or a query: one decorator, one message.
 */
export const IsSafeSegment = (doc: {
  required: boolean;
  description?: string;
}): PropertyDecorator =>
  InputProperty(
    { type: 'string', pattern: SAFE_SEGMENT.source, description: doc.description },
    (value) =>
      isSafeSegment(value)
        ? value
        : refuse(`must be a single safe path segment: ${SAFE_SEGMENT.source}`),
    doc.required,
  );
