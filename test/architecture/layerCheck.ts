import type { ImportEdge, SourceFile } from './importGraph.js';

/**
 * A group of files on one layer. A file may import files of its own group and of any group on a
 * lower layer, except those named in `mayNotImport`; `mayImport` names groups of its own layer it
 * may import too. `typesOnlyFrom`: groups whose files it may import only for their types (with
 * `typesOnlyExcept` naming files it may import whole).
 */
export type LayerGroup = {
  name: string;
  layer: number;
  /** Folders (ending in `/`) or files, from the project root. The longest match places a file. */
  paths: readonly string[];
  mayImport?: readonly string[];
  mayNotImport?: readonly string[];
  typesOnlyFrom?: readonly string[];
  typesOnlyExcept?: readonly string[];
};

export type Violation =
  | { kind: 'unplaced'; file: string }
  | { kind: 'upward'; edge: ImportEdge; from: string; to: string }
  | { kind: 'forbidden'; edge: ImportEdge; from: string; to: string }
  | { kind: 'values'; edge: ImportEdge; from: string; to: string }
  | { kind: 'cycle'; files: string[] }
  | { kind: 'size'; file: string; lines: number };

/** The group a file belongs to: the one with the longest path matching it. */
export function groupOf(groups: readonly LayerGroup[], file: string): LayerGroup | null {
  let best: { group: LayerGroup; length: number } | null = null;
  for (const group of groups) {
    for (const p of group.paths) {
      const matches = p.endsWith('/') ? file.startsWith(p) : file === p;
      if (matches && (!best || p.length > best.length)) best = { group, length: p.length };
    }
  }
  return best?.group ?? null;
}

/** Every import that breaks the layers: upward, forbidden, or a value import where only types may come. */
export function layerViolations(groups: readonly LayerGroup[], files: readonly string[], edges: readonly ImportEdge[]): Violation[] {
  const out: Violation[] = [];
  for (const file of files) if (!groupOf(groups, file)) out.push({ kind: 'unplaced', file });
  for (const edge of edges) {
    const from = groupOf(groups, edge.from);
    const to = groupOf(groups, edge.to);
    if (!from || !to || from === to) continue;
    if (from.mayNotImport?.includes(to.name)) out.push({ kind: 'forbidden', edge, from: from.name, to: to.name });
    else if (to.layer > from.layer || (to.layer === from.layer && !from.mayImport?.includes(to.name))) out.push({ kind: 'upward', edge, from: from.name, to: to.name });
    else if (from.typesOnlyFrom?.includes(to.name) && !edge.typeOnly && !from.typesOnlyExcept?.includes(edge.to)) out.push({ kind: 'values', edge, from: from.name, to: to.name });
  }
  return out;
}

/** Every import cycle among files (strongly connected components of more than one file, or a file importing itself). */
export function importCycles(edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  let counter = 0;
  // Tarjan's algorithm, iterative: the graph has a few thousand edges but deep chains.
  for (const start of next.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; i: number }[] = [{ node: start, i: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const top = work[work.length - 1]!;
      const targets = next.get(top.node) ?? [];
      if (top.i < targets.length) {
        const t = targets[top.i++]!;
        if (!index.has(t)) {
          index.set(t, counter);
          low.set(t, counter++);
          stack.push(t);
          onStack.add(t);
          work.push({ node: t, i: 0 });
        } else if (onStack.has(t)) low.set(top.node, Math.min(low.get(top.node)!, index.get(t)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node)!, low.get(top.node)!));
      if (low.get(top.node) === index.get(top.node)) {
        const component: string[] = [];
        let n: string;
        do {
          n = stack.pop()!;
          onStack.delete(n);
          component.push(n);
        } while (n !== top.node);
        if (component.length > 1 || targets.includes(top.node)) cycles.push(component.sort());
      }
    }
  }
  return cycles;
}

/** Files longer than `maxLines`, unless `exempt` says they are generated data or tests. */
export function oversized(files: readonly SourceFile[], maxLines: number, exempt: (path: string) => boolean): Violation[] {
  return files.filter((f) => f.lines > maxLines && !exempt(f.path)).map((f) => ({ kind: 'size', file: f.path, lines: f.lines }));
}

/** One line a violation, in words a reader acts on. */
export function describe(groups: readonly LayerGroup[], v: Violation): string {
  const layer = (name: string) => groups.find((g) => g.name === name)!.layer;
  switch (v.kind) {
    case 'unplaced':
      return `${v.file} belongs to no layer (add its folder to test/architecture/layerRules.ts)`;
    case 'upward':
      return layer(v.to) === layer(v.from)
        ? `${v.edge.from}:${v.edge.line} imports ${v.edge.to} (${v.from} may not import ${v.to}, a neighbour on layer ${layer(v.to)})`
        : `${v.edge.from}:${v.edge.line} imports ${v.edge.to} (${v.to}, layer ${layer(v.to)}, above ${v.from}, layer ${layer(v.from)})`;
    case 'forbidden':
      return `${v.edge.from}:${v.edge.line} imports ${v.edge.to} (${v.from} may not import ${v.to})`;
    case 'values':
      return `${v.edge.from}:${v.edge.line} imports values from ${v.edge.to} (${v.from} may import only types from ${v.to}: write \`import type\`)`;
    case 'cycle':
      return `import cycle among ${v.files.length} files: ${v.files.join(', ')}`;
    case 'size':
      return `${v.file} has ${v.lines} lines (at most 450 outside tests and generated data: split it by concept)`;
  }
}
