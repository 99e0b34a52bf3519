import { ConflictError } from '@app/errors';

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
