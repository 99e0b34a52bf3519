import { Term } from '../terms/term.entity';

/**
 * Every entity of the catalog schema, listed explicitly (never globbed) so the app, the
 * migration CLI and the tests all see exactly the same model. Append new entities here.
 */
export const catalogEntities: (new (...args: never[]) => object)[] = [Term];
