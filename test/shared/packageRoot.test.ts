import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRootOf } from '../../src/shared/packageRoot.js';
import { tempDir } from '../support/tmp.js';

/** Issue 27: `npm start` runs modules from dist/src/..., one level deeper than src/...; paths to the package's own files must not count levels. */
describe('the package root, from sources and from compiled modules (issue 27)', () => {
  it('is the nearest directory holding package.json, from src/demo and from dist/src/demo alike', () => {
    const root = tempDir('wellstream-root-');
    writeFileSync(join(root, 'package.json'), '{}');
    for (const dir of [join(root, 'src', 'demo'), join(root, 'dist', 'src', 'demo')]) {
      mkdirSync(dir, { recursive: true });
      expect(packageRootOf(dir)).toBe(root);
    }
  });

  it('is null where no directory up to the file system root holds package.json', () => {
    expect(packageRootOf('/')).toBeNull();
  });
});
