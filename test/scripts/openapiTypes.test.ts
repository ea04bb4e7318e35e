import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { apiTypesOf, CONSOLE_API_TYPES, openapiDocument } from '../../scripts/openapiTypes.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * issue 36 (Deliver, OpenAPI): the console reads the API's answers through types generated from
 * the OpenAPI document, never hand-kept copies; the committed ones must be what the document
 * generates today, and the console must compile against them.
 */
describe('the console’s answer types come from the OpenAPI document (npm run openapi:types)', () => {
  it('committed console/src/api.gen.ts equals what the current document generates (else: npm run openapi:types)', async () => {
    const generated = await apiTypesOf(await openapiDocument());
    expect(readFileSync(CONSOLE_API_TYPES, 'utf8') === generated, 'console/src/api.gen.ts is stale: run npm run openapi:types and commit it').toBe(true);
  });

  it('the console compiles against them (console/tsconfig.json)', () => {
    const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));
    let errors = '';
    try {
      execFileSync(process.execPath, [tsc, '-p', 'console/tsconfig.json'], { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' });
    } catch (err) {
      errors = String((err as { stdout?: string }).stdout ?? err);
    }
    expect(errors).toBe('');
  });
});
