import { describe, expect, it } from 'vitest';
import { importsOf, type ImportEdge } from './importGraph.js';
import { describe as say, groupOf, importCycles, layerViolations, oversized, type LayerGroup } from './layerCheck.js';

/** A small world: shared < catalog < domain < sources < processes, and a tool beside processes that may not import them. */
const GROUPS: LayerGroup[] = [
  { name: 'shared', layer: 0, paths: ['src/shared/'] },
  { name: 'catalog', layer: 1, paths: ['src/catalog/'] },
  { name: 'domain', layer: 3, paths: ['commands/', 'src/crypto/'] },
  { name: 'sources', layer: 4, paths: ['src/sources/'], typesOnlyFrom: ['domain'], typesOnlyExcept: ['commands/shared/domainError.ts'] },
  { name: 'processes', layer: 6, paths: ['src/processes/', 'src/sources/entry.ts'] },
  { name: 'tool', layer: 6, paths: ['src/tool/'], mayNotImport: ['processes'] },
];
const edge = (from: string, to: string, typeOnly = false): ImportEdge => ({ from, to, line: 1, typeOnly });
const files = ['src/shared/ids.ts', 'src/catalog/providers.ts', 'commands/x.ts', 'commands/shared/domainError.ts', 'src/sources/a.ts', 'src/sources/entry.ts', 'src/processes/y.ts', 'src/tool/t.ts'];

describe('the layer checker (issue 24: the layer test fails on an upward import and on a cycle)', () => {
  it('places a file by its longest matching path', () => {
    expect(groupOf(GROUPS, 'src/sources/a.ts')?.name).toBe('sources');
    expect(groupOf(GROUPS, 'src/sources/entry.ts')?.name).toBe('processes');
    expect(groupOf(GROUPS, 'src/elsewhere.ts')).toBeNull();
  });

  it('accepts imports of the same or a lower layer', () => {
    const ok = [edge('commands/x.ts', 'src/catalog/providers.ts'), edge('src/processes/y.ts', 'commands/x.ts'), edge('src/sources/a.ts', 'commands/x.ts', true), edge('src/catalog/providers.ts', 'src/shared/ids.ts')];
    expect(layerViolations(GROUPS, files, ok)).toEqual([]);
  });

  it('fails on a command importing a process or a source adapter, and says which arrow runs upward', () => {
    const v = layerViolations(GROUPS, files, [edge('commands/x.ts', 'src/processes/y.ts'), edge('commands/x.ts', 'src/sources/a.ts')]);
    expect(v.map((x) => say(GROUPS, x))).toEqual([
      'commands/x.ts:1 imports src/processes/y.ts (processes, layer 6, above domain, layer 3)',
      'commands/x.ts:1 imports src/sources/a.ts (sources, layer 4, above domain, layer 3)',
    ]);
  });

  it('fails on a forbidden neighbour, a value import where only types may come, and a file in no layer', () => {
    const v = layerViolations(GROUPS, [...files, 'src/stray.ts'], [edge('src/tool/t.ts', 'src/processes/y.ts'), edge('src/sources/a.ts', 'commands/x.ts'), edge('src/sources/a.ts', 'commands/shared/domainError.ts')]);
    expect(v.map((x) => x.kind).sort()).toEqual(['forbidden', 'unplaced', 'values']);
  });

  it('finds every import cycle, of two files or more, and a file importing itself', () => {
    const cycles = importCycles([edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts'), edge('c.ts', 'a.ts'), edge('c.ts', 'd.ts'), edge('d.ts', 'e.ts'), edge('e.ts', 'e.ts')]);
    expect(cycles.map((c) => c.join(' ')).sort()).toEqual(['a.ts b.ts c.ts', 'e.ts']);
    expect(importCycles([edge('a.ts', 'b.ts'), edge('b.ts', 'c.ts')])).toEqual([]);
  });

  it('flags files over the line limit unless they are generated data', () => {
    const v = oversized(
      [
        { path: 'src/big.ts', lines: 451 },
        { path: 'src/ok.ts', lines: 450 },
        { path: 'src/table.ts', lines: 9000 },
      ],
      450,
      (p) => p === 'src/table.ts',
    );
    expect(v).toEqual([{ kind: 'size', file: 'src/big.ts', lines: 451 }]);
  });

  it('reads static, type-only, re-exported and dynamic imports of relative modules, and ignores packages', () => {
    const text = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "import { type C, type D } from './cd.js';",
      "import { type E, f } from './ef.js';",
      "export { g } from './g.js';",
      "export type { H } from './h.js';",
      "import x from 'zod';",
      "const m = await import('./lazy.js');",
      "type T = import('./t.js').T;",
    ].join('\n');
    expect(importsOf('f.ts', text).map((i) => `${i.specifier} ${i.typeOnly ? 'type' : 'value'}`)).toEqual([
      './a.js value',
      '../b.js type',
      './cd.js type',
      './ef.js value',
      './g.js value',
      './h.js type',
      './lazy.js value',
      './t.js type',
    ]);
  });
});
