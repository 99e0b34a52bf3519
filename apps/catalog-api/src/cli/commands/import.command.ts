import { assertJsonLimits } from '@app/platform';
import { CATALOG_SETTINGS, CatalogSettings } from '../../config/catalog.settings';
import { CatalogImportService } from '../../catalog-imports/catalog-import.service';
import { detectKind, isImportKind } from '../../catalog-imports/import-document';
import { IMPORT_KINDS } from '../../catalog-imports/import-shapes';
import { allowOptions, CliCommand, CliUsageError, option, positional } from '../cli-command';

export const importCommand: CliCommand = {
  name: 'import',
  usage: `<file.json> [--kind ${IMPORT_KINDS.join('|')}]`,
  summary: 'Import a document {"items": [...]} (the kind is detected unless given)',
  async run(ctx, args) {
    allowOptions(args, ['kind']);
    const file = positional(args, 0, 'file.json');
    const text = ctx.readFile(file);
    // The same limits as the import routes: parsing and checking cost per object and level.
    const settings = ctx.app.get<CatalogSettings>(CATALOG_SETTINGS);
    assertJsonLimits(
      text,
      { maxDepth: settings.MAX_JSON_DEPTH, maxObjects: settings.MAX_JSON_OBJECTS },
      file,
    );
    let document: unknown;
    try {
      document = JSON.parse(text);
    } catch (error) {
      throw new CliUsageError(`${file}: ${(error as Error).message}`);
    }
    const given = option(args, 'kind', true);
    if (given !== undefined && !isImportKind(given)) {
      throw new CliUsageError(`--kind must be one of ${IMPORT_KINDS.join(', ')}`);
    }
    const kind = given ?? detectKind(document);
    if (kind === undefined)
      throw new CliUsageError(`${file}: cannot tell what it holds; pass --kind`);
    return { kind, ...(await ctx.app.get(CatalogImportService).import(kind, document, ctx.actor)) };
  },
};
