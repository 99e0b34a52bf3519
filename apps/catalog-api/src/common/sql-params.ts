/**
 * Collects positional parameters while a query is assembled from fragments (visibility, exact
 * filters): the repositories that compose statements share it, so it stays outside them.
 */
export class SqlParams {
  readonly values: unknown[] = [];

  /** Adds a value and returns its placeholder (`$n`). */
  add(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }
}
