import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The package's root (the directory holding package.json), found by walking up from `dir`: a
 * module runs from `src/...` through tsx and from `dist/src/...` when compiled (`npm start`),
 * so a fixed number of `..` from `import.meta.url` is right in only one of them.
 */
export function packageRootOf(dir: string): string | null {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, 'package.json'))) return at;
    if (dirname(at) === at) return null;
  }
}
