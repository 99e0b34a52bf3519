import { ConflictError, ValidationFailedError } from '@app/errors';
import type { Shape, ShapeProblem } from '../imports/shape';

/** Checks a request body (or CLI arguments) against a shape; 400 listing every problem. */
export function parseBody<T>(shape: Shape<T>, body: unknown): T {
  const problems: ShapeProblem[] = [];
  const parsed = shape.parse(body ?? {}, '', problems);
  if (problems.length > 0 || parsed === undefined) {
    throw new ValidationFailedError(
      problems.map((p) => ({ field: p.path || undefined, message: p.message })),
    );
  }
  return parsed;
}

/** Turns a unique-constraint violation (e.g. two concurrent creates) into a 409. */
export async function conflictOnDuplicate<T>(
  work: () => Promise<T>,
  description: string,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if ((error as { code?: string }).code === '23505') throw new ConflictError(description);
    throw error;
  }
}
