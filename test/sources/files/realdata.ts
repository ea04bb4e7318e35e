import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The real public exports live beside the project (`../shared/realdata`, never copied into it). A
 * git worktree sits one level deeper than the main checkout, so both are looked at, and
 * WELLSTREAM_REALDATA may name the folder. Null when absent: the tests skip with one line.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const candidates = [process.env.WELLSTREAM_REALDATA, join(root, '../shared/realdata'), join(root, '../../shared/realdata')].filter((p): p is string => !!p);

export function realdataPath(...parts: string[]): string | null {
  for (const base of candidates) {
    const p = join(base, ...parts);
    if (existsSync(p)) return p;
  }
  return null;
}
