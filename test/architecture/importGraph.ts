import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/** One import of one file by another, both as paths from the project root with `/`. */
export type ImportEdge = { from: string; to: string; line: number; typeOnly: boolean };

export type SourceFile = { path: string; lines: number };

export type ImportGraph = { files: SourceFile[]; edges: ImportEdge[]; unresolved: { from: string; specifier: string; line: number }[] };

const SOURCE = /\.(ts|mts|tsx)$/;
const toPosix = (p: string) => p.split(sep).join('/');

/** Every TypeScript file below `dirs` (paths from `root`), declarations files left out. */
export function listSources(root: string, dirs: readonly string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules') walk(full);
      } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(toPosix(relative(root, full)));
    }
  };
  for (const d of dirs) if (existsSync(join(root, d))) walk(join(root, d));
  return out.sort();
}

export const lineCount = (text: string) => (text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0));

/**
 * The imports of one file's text: static imports and re-exports (type-only when the whole
 * clause is `type` or every named element is), `import type` queries, and `import('…')` calls.
 * Only relative specifiers are returned: packages and `node:` modules are not ours.
 */
export function importsOf(fileName: string, text: string): { specifier: string; line: number; typeOnly: boolean }[] {
  const file = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, fileName.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: { specifier: string; line: number; typeOnly: boolean }[] = [];
  const add = (node: ts.Node, literal: ts.Expression | undefined, typeOnly: boolean) => {
    if (!literal || !ts.isStringLiteralLike(literal) || !literal.text.startsWith('.')) return;
    out.push({ specifier: literal.text, line: file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1, typeOnly });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : null;
      const typeOnly = !!clause && (clause.isTypeOnly || (!clause.name && !!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
      add(node, node.moduleSpecifier, typeOnly);
    } else if (ts.isExportDeclaration(node)) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : null;
      add(node, node.moduleSpecifier, node.isTypeOnly || (!!named && named.length > 0 && named.every((e) => e.isTypeOnly)));
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node, node.argument.literal, true);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node, node.arguments[0], false);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return out;
}

/** The file a relative specifier names: `.js` written for a `.ts` file (NodeNext), the file itself, or a folder's index. */
export function resolveSpecifier(root: string, from: string, specifier: string): string | null {
  const base = resolve(root, dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, '.ts'), base.replace(/\.mjs$/, '.mts'), base, `${base}.ts`, join(base, 'index.ts')];
  for (const c of candidates) if (existsSync(c) && statSync(c).isFile()) return toPosix(relative(root, c));
  return null;
}

/** The import graph of the TypeScript files below `dirs`. */
export function readImportGraph(root: string, dirs: readonly string[]): ImportGraph {
  const files: SourceFile[] = [];
  const edges: ImportEdge[] = [];
  const unresolved: ImportGraph['unresolved'] = [];
  for (const path of listSources(root, dirs)) {
    const text = readFileSync(join(root, path), 'utf8');
    files.push({ path, lines: lineCount(text) });
    for (const i of importsOf(path, text)) {
      const to = resolveSpecifier(root, path, i.specifier);
      if (to === null) unresolved.push({ from: path, specifier: i.specifier, line: i.line });
      else edges.push({ from: path, to, line: i.line, typeOnly: i.typeOnly });
    }
  }
  return { files, edges, unresolved };
}
