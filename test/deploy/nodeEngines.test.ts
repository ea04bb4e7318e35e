import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Issue 23: `npm ci` warned EBADENGINE because a dependency (cookie@2 under light-my-request)
 * wants Node 22 while the README says Node 20.19+. Every package the lock file installs must
 * accept the oldest Node the project states, so npm has nothing to warn about.
 */
const semver = createRequire(import.meta.url)('semver') as { minVersion: (range: string) => { version: string } | null; satisfies: (v: string, range: string) => boolean };
const root = join(import.meta.dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, { version?: string; engines?: { node?: string } | string[] }> };

describe('the Node version the project states (issue 23: no engine warning on npm ci)', () => {
  const oldest = semver.minVersion(pkg.engines.node)!.version;

  it('the README states the engine of package.json', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const [major, minor] = oldest.split('.');
    expect(readme).toContain(`Node ${major}.${minor}+`);
  });

  it(`every package of the lock file runs on the oldest Node of package.json's engines`, () => {
    const refusing = Object.entries(lock.packages)
      .filter(([path]) => path !== '')
      .flatMap(([path, p]) => {
        const range = !p.engines || Array.isArray(p.engines) ? undefined : p.engines.node;
        return range && !semver.satisfies(oldest, range) ? [`${path.replace(/^node_modules\//, '')}@${p.version}: node ${range}`] : [];
      });
    expect(refusing).toEqual([]);
  });
});
