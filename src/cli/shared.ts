import { InvalidArgumentError } from 'commander';
import { ZodError } from 'zod';
import { DomainError } from '../../commands/shared/domainError.js';
import type { AppContext } from '../server/appContext.js';
import { ConfigError } from '../config.js';

/**
 * Opens the application context on demand: commands that only print help or fail argument
 * parsing never touch the stores. `runBackground: true` runs the projections (nothing else) so
 * read models catch up; `false` only ensures the collections exist. `readCacheMiB`: the embedded
 * read store's page cache, for commands that write a whole read model (a rebuild).
 */
export type ContextRequest = { runBackground: boolean; readCacheMiB?: number };
export type OpenContext = (options: ContextRequest) => Promise<AppContext>;

/** A refusal the user can act on (unknown id, bad argument): one line on stderr, exit 1, no stack. */
export class CliError extends Error {
  override name = 'CliError';
}

/** Runs `fn` with a fresh context and always closes it, so the process can exit. */
export async function withContext<T>(open: OpenContext, options: ContextRequest, fn: (ctx: AppContext) => Promise<T>): Promise<T> {
  const ctx = await open(options);
  let result: T;
  try {
    result = await fn(ctx);
  } catch (err) {
    await ctx.close().catch((closeErr: unknown) => ctx.log.warn({ err: closeErr }, 'closing the context failed'));
    throw err;
  }
  await ctx.close();
  return result;
}

/** Machine-readable output: exactly one JSON document per line on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(JSON.stringify(value) + '\n');
}

export function printLine(line: string): void {
  process.stdout.write(line + '\n');
}

/** Left-aligned text columns, right-aligned numbers, two spaces between columns. */
export function formatTable(headers: readonly string[], rows: readonly (readonly (string | number)[])[]): string[] {
  const cells = [headers.map(String), ...rows.map((r) => r.map(String))];
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => typeof r[i] === 'number'));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells.map((r) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd(),
  );
}

export function parsePositiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

/** Errors the user caused or can fix print as one line; anything else also gets its stack. */
export function describeError(err: unknown): { message: string; expected: boolean } {
  if (err instanceof CliError || err instanceof ConfigError || err instanceof DomainError) return { message: err.message, expected: true };
  if (err instanceof ZodError) {
    return { message: err.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; '), expected: true };
  }
  if (err instanceof Error) return { message: err.message, expected: false };
  return { message: String(err), expected: false };
}
