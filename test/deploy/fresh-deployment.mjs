// A fresh deployment is complete: before any demo data, the term vocabularies the release ships
// are in the catalog (the migration step loads them), so term search answers.
import assert from 'node:assert/strict';
import { request } from './fixtures.mjs';

/** GET /api/termsearch/disease?search=diabetes on a catalog nobody has loaded anything into. */
export async function termSearchAnswers(catalogUrl) {
  const { status, text } = await request(
    `${catalogUrl}/api/termsearch/disease?search=diabetes&page=1`,
  );
  assert.equal(status, 200, text.slice(0, 300));
  const { results } = JSON.parse(text);
  assert.ok(results.length > 0, 'no term found');
  assert.ok(
    results.every((r) => /diabetes/i.test(r.text)),
    JSON.stringify(results).slice(0, 300),
  );
  return `${results.length} diseases found for "diabetes", e.g. ${results[0].text} (${results[0].term_id})`;
}
