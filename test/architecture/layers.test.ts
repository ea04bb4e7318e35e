import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { lineCount, listSources, readImportGraph } from './importGraph.js';
import { describe as say, importCycles, layerViolations, oversized } from './layerCheck.js';
import { GENERATED_DATA, LAYERED_DIRS, LAYERS, MAX_FILE_LINES, SIZED_DIRS } from './layerRules.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the layers of the service (issue 24; docs/architecture.md "Layers")', () => {
  const graph = readImportGraph(ROOT, LAYERED_DIRS);

  it('every relative import names a file that exists', () => {
    expect(graph.unresolved.map((u) => `${u.from}:${u.line} imports ${u.specifier}`)).toEqual([]);
  });

  it('every file belongs to a layer and imports only its own layer and those below (the domain never imports an adapter, a source, a process or the server)', () => {
    const violations = layerViolations(
      LAYERS,
      graph.files.map((f) => f.path),
      graph.edges,
    );
    expect(violations.map((v) => say(LAYERS, v))).toEqual([]);
  });

  it('no file imports itself back through others (no import cycle)', () => {
    expect(importCycles(graph.edges).map((files) => say(LAYERS, { kind: 'cycle', files }))).toEqual([]);
  });

  it(`no source file has more than ${MAX_FILE_LINES} lines, outside tests and generated data`, () => {
    const files = listSources(ROOT, SIZED_DIRS).map((path) => ({ path, lines: lineCount(readFileSync(join(ROOT, path), 'utf8')) }));
    expect(files.length).toBeGreaterThan(500);
    expect(oversized(files, MAX_FILE_LINES, (p) => GENERATED_DATA.includes(p)).map((v) => say(LAYERS, v))).toEqual([]);
  });
});
