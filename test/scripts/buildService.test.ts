import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildStaleSources, outDirOf, staleSources } from '../../scripts/buildService.mjs';
import { tempDir } from '../support/tmp.js';

/** A package root with two modules under src/: one imports the other and a type. */
function tinyPackage(): string {
  const root = tempDir('wellstream-build-');
  mkdirSync(join(root, 'src'), { recursive: true });
  writeFileSync(join(root, 'package.json'), '{"type":"module"}');
  writeFileSync(join(root, 'src', 'answer.ts'), 'export type Answer = { value: number };\nexport const answer = (n: number): Answer => ({ value: n * 2 });\n');
  writeFileSync(join(root, 'src', 'main.ts'), "import { answer, type Answer } from './answer.js';\nconst a: Answer = answer(21);\nconsole.log(a.value);\n");
  return root;
}

const run = (root: string) => execFileSync(process.execPath, [join(outDirOf(root), 'src', 'main.js')], { encoding: 'utf8' }).trim();

describe('npm start compiles the sources that changed, then runs JavaScript (issue 27, resident memory)', () => {
  it('compiles every source of a fresh checkout into dist/, runnable by node without tsx', async () => {
    const root = tinyPackage();
    expect(staleSources(root).map((p) => p.slice(root.length))).toEqual(['/src/answer.ts', '/src/main.ts']);
    expect(await buildStaleSources(root)).toBe(2);
    expect(run(root)).toBe('42');
  });

  it('compiles nothing when every output is newer than its source, and only the edited source after an edit', async () => {
    const root = tinyPackage();
    await buildStaleSources(root);
    expect(await buildStaleSources(root)).toBe(0);
    const source = join(root, 'src', 'answer.ts');
    writeFileSync(source, 'export type Answer = { value: number };\nexport const answer = (n: number): Answer => ({ value: n + 1 });\n');
    // A checkout or an editor may keep the second the output was written in: the source is made newer for sure.
    const later = new Date(statSync(join(outDirOf(root), 'src', 'answer.js')).mtimeMs + 2_000);
    utimesSync(source, later, later);
    expect(staleSources(root).map((p) => p.slice(root.length))).toEqual(['/src/answer.ts']);
    expect(await buildStaleSources(root)).toBe(1);
    expect(run(root)).toBe('22');
  });

  it('leaves no temporary file beside an output (each output is renamed into place whole)', async () => {
    const root = tinyPackage();
    await buildStaleSources(root);
    const listing = execFileSync('find', [outDirOf(root), '-type', 'f'], { encoding: 'utf8' }).trim().split('\n').sort();
    expect(listing.map((p) => p.slice(root.length))).toEqual(['/dist/src/answer.js', '/dist/src/main.js']);
    expect(readFileSync(join(outDirOf(root), 'src', 'main.js'), 'utf8')).not.toContain('type Answer');
  });
});
