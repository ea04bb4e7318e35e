import { createHash, randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { externalRefState, externalRefStream } from '../../commands/users/externalRef.js';
import { mintUserToken } from '../../commands/users/mintUserToken.js';
import { loadState } from '../../commands/shared/commandHandler.js';
import { listTenants } from '../../queries/tenants/listTenants.js';
import type { UploadResource } from '../../queries/ingestion/uploads.js';
import type { AppContext } from '../server/appContext.js';
import { formatBytes } from '../shared/byteSize.js';
import { newSecret, sha256Hex } from '../shared/secrets.js';
import { canonicalTimeZone } from '../shared/timeZones.js';
import { SERVICE_URL_VARIABLE, serviceUrlFromEnv } from '../shared/serviceUrl.js';
import { unreachableReason } from '../shared/unreachable.js';
import { fileByteSource } from '../sources/files/exportShared/byteSources.js';
import { formatOf } from '../sources/files/formatOf.js';
import { IMPORT_SLUGS } from '../sources/registry.js';
import { CliError, printJson, withContext, type OpenContext } from './shared.js';
import { tusUpload } from './tusClient.js';

/** The user of an external_ref: in the tenant named, or the one tenant that has it. */
async function userOf(ctx: AppContext, externalRef: string, tenantId: string | undefined): Promise<{ tenantId: string; userId: string }> {
  const tenants = tenantId ? [tenantId] : (await listTenants(ctx.readStore, { after: null, limit: 10_000 })).items.map((t) => t.id);
  const found: { tenantId: string; userId: string }[] = [];
  for (const t of tenants) {
    const { state } = await loadState(ctx.eventStore, externalRefStream(t, externalRef), externalRefState);
    if (state.claimedBy) found.push({ tenantId: t, userId: state.claimedBy });
  }
  if (found.length === 0) throw new CliError(`no user has external_ref ${externalRef}${tenantId ? ` in tenant ${tenantId}` : ''}`);
  if (found.length > 1) throw new CliError(`external_ref ${externalRef} names users of several tenants; say which with --tenant`);
  return found[0]!;
}

/** One line, rewritten in place on a terminal: a bar, the percentage and the counts. */
function bar(label: string, done: number, total: number, unit: (n: number) => string): void {
  const share = total > 0 ? Math.min(1, done / total) : 0;
  const width = 30;
  const filled = Math.round(share * width);
  const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${(share * 100).toFixed(0).padStart(3)}% ${unit(done)} / ${unit(total)}`;
  if (process.stderr.isTTY) process.stderr.write(`\r${line}`);
  else process.stderr.write(`${line}\n`);
}

/** The format of a file sent without --provider, told from its bytes (sources/files/formatOf.ts). */
async function providerOf(file: string): Promise<string> {
  const verdict = await formatOf(fileByteSource(file));
  if ('unknown' in verdict) throw new CliError(`cannot tell the format of ${file}: ${verdict.unknown}; name it with --provider (one of ${IMPORT_SLUGS.join(', ')})`);
  process.stderr.write(`format: ${verdict.slug} (told from the file; --provider names another)\n`);
  return verdict.slug;
}

/**
 * Reads of the outcome that fail in a row before the CLI gives up: the last byte is stored by
 * then, so giving up loses nothing (the service processes the upload when it runs again), and a
 * person is told so rather than left watching retries.
 */
const OUTCOME_ATTEMPTS = 3;

/**
 * `import <file> --user <external_ref>` (issue 21): uploads a native export by tus with a progress
 * bar of bytes, then follows its processing (records read) and prints the Upload (contracts §12)
 * as one JSON line. The CLI mints the user a short-lived upload token on the store and talks to
 * the running service over HTTP (`--url`, else WELLSTREAM_URL, else PUBLIC_BASE_URL). Run again,
 * it resumes (the upload keeps the `--tz` it was created with: a resumed upload is read as it began).
 */
export function registerImportCommand(program: Command, openCtx: OpenContext): void {
  program
    .command('import')
    .description("upload a native export (Apple Health export.zip, Health Connect, Fitbit Takeout, Samsung Health, Dexcom Clarity CSV) for a user, resumable, and print its outcome")
    .argument('<file>', 'the export file')
    .requiredOption('--user <external_ref>', "the user's external_ref")
    .option('--tenant <tenant_id>', 'the tenant, when several have a user with that external_ref')
    .option('--provider <slug>', `the format, one of ${IMPORT_SLUGS.join(', ')} (default: told from the file)`)
    .option('--upload-id <id>', 'the Upload-Id (default: from the file name and size, so running again resumes)')
    .option('--url <origin>', `the service's address (default: $${SERVICE_URL_VARIABLE}, else PUBLIC_BASE_URL)`)
    .option('--tz <zone>', 'the IANA time zone the export\'s local times are in, for exports whose times carry no offset (a Fitbit Takeout without a profile zone, Dexcom Clarity); sent as the tus metadata tz')
    .action(async (file: string, o: { user: string; tenant?: string; provider?: string; uploadId?: string; url?: string; tz?: string }) => {
      if (o.provider !== undefined && !IMPORT_SLUGS.includes(o.provider)) throw new CliError(`--provider must be one of ${IMPORT_SLUGS.join(', ')}`);
      // Checked here as the service checks it (400), so a misspelt zone costs no upload.
      const tz = o.tz === undefined ? null : canonicalTimeZone(o.tz.trim());
      if (o.tz !== undefined && !tz) throw new CliError(`--tz must be an IANA time zone such as Europe/Berlin; ${JSON.stringify(o.tz)} is not one`);
      let size: number;
      try {
        const stat = statSync(file);
        if (!stat.isFile()) throw new CliError(`${file} is not a file`);
        size = stat.size;
      } catch (err) {
        if (err instanceof CliError) throw err;
        throw new CliError(`cannot read ${file}`);
      }
      // tus has no upload of 0 bytes to stream, and no format has an empty export.
      if (size === 0) throw new CliError(`${file} is empty: nothing to upload`);
      const provider = o.provider ?? (await providerOf(file));
      const uploadId = o.uploadId ?? `${basename(file).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 80)}-${createHash('sha256').update(`${size}`).digest('hex').slice(0, 12)}`;
      const { token, origin } = await withContext(openCtx, { runBackground: true }, async (ctx) => {
        await ctx.settle();
        const { tenantId, userId } = await userOf(ctx, o.user, o.tenant);
        const token = newSecret('userToken');
        const minted = await mintUserToken(ctx.eventStore, { tenantId, userId, tokenId: randomUUID(), tokenHash: sha256Hex(token), scopes: ['upload'], ttlSeconds: 86_400, at: new Date().toISOString(), by: 'cli' });
        // The token must authenticate before the first request.
        await ctx.settle(minted.position);
        return { token, origin: (o.url ?? serviceUrlFromEnv() ?? ctx.config.publicBaseUrl).replace(/\/$/, '') };
      });
      await tusUpload({ origin, token, path: file, size, metadata: { provider, upload_id: uploadId, ...(tz ? { tz } : {}) } }, (sent) => bar('upload ', sent, size, formatBytes));
      if (process.stderr.isTTY) process.stderr.write('\n');
      const url = `${origin}/v1/me/uploads/${provider}/${encodeURIComponent(uploadId)}`;
      let failures = 0;
      for (;;) {
        const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } }).catch((err: unknown) => err as Error);
        if (res instanceof Error || res.status >= 500) {
          const reason = res instanceof Error ? (unreachableReason(res) ?? res.message) : `it answered ${res.status}`;
          if (++failures >= OUTCOME_ATTEMPTS) {
            throw new CliError(`the service at ${origin} stopped (${reason}); the upload is stored and will be processed when it starts again; run the same command to see its outcome`);
          }
          await new Promise((r) => setTimeout(r, 1000));
          continue;
        }
        failures = 0;
        if (!res.ok) throw new CliError(`the upload's outcome could not be read: ${res.status}`);
        const upload = (await res.json()) as UploadResource;
        if (upload.progress) bar('records', upload.progress.bytes_read, upload.progress.bytes_total, (n) => (n === upload.progress!.bytes_total ? formatBytes(n) : `${formatBytes(n)} (${upload.progress!.records_read} records)`));
        if (upload.status === 'done' || upload.status === 'failed' || upload.status === 'parked') {
          if (process.stderr.isTTY) process.stderr.write('\n');
          printJson(upload);
          if (upload.status !== 'done') {
            process.stderr.write(`the upload ended ${upload.status}${upload.error ? `: ${upload.error}` : ''}\n`);
            process.exitCode = 1;
          }
          return;
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    });
}
