import type { Command } from 'commander';
import { resealConnectionTokens, resealProviderKeys } from '../../commands/connections/resealSecrets.js';
import { resealWebhookSecret } from '../../commands/webhooks/resealWebhookSecret.js';
import type { AppContext } from '../server/appContext.js';
import { printJson, withContext, type OpenContext } from './shared.js';

/**
 * `datakeys reseal`: the second half of a SEALING_KEY rotation (docs/erasure.md). With the new key
 * in SEALING_KEY and the old one in SEALING_KEY_PREVIOUS, every data key, webhook signing secret,
 * tenant provider key and connection's OAuth tokens still sealed under the old one is sealed again
 * under the new one; afterwards the old key can be dropped. One command, so that no kind of sealed
 * item is forgotten.
 */
export function registerDataKeysCommands(program: Command, open: OpenContext): void {
  const group = program.command('datakeys').description('per user and provider data keys (docs/erasure.md)');

  group
    .command('reseal')
    .description(
      'seal every live data key, webhook signing secret, tenant provider key and OAuth token under the current SEALING_KEY; prints {"keys","resealed","webhook_secrets","webhook_secrets_resealed","provider_keys","provider_keys_resealed","connection_tokens","connection_tokens_resealed"}',
    )
    .action(async () => {
      await withContext(open, { runBackground: false }, async (ctx) => {
        let resealed = 0;
        const keyStreams = await streamsWith(ctx, 'datakey.issued');
        for (const stream of keyStreams) if (await ctx.dataKeys.reseal(stream)) resealed++;
        const webhooks = await resealWebhookSecrets(ctx);
        const at = new Date().toISOString();
        const providerKeys = await resealEach(ctx, 'provider_keys.replaced', (d) => `${d.tenant_id}\u0000${d.provider}`, (d) =>
          resealProviderKeys(ctx.eventStore, ctx.valueSealer, { tenantId: d.tenant_id!, provider: d.provider!, at }),
        );
        const tokens = await resealEach(ctx, 'connection.established', (d) => `${d.user_id}\u0000${d.provider}`, (d) =>
          resealConnectionTokens(ctx.eventStore, ctx.valueSealer, ctx.credentials, { userId: d.user_id!, provider: d.provider!, at }),
        );
        printJson({
          keys: keyStreams.size,
          resealed,
          webhook_secrets: webhooks.live,
          webhook_secrets_resealed: webhooks.resealed,
          provider_keys: providerKeys.live,
          provider_keys_resealed: providerKeys.resealed,
          connection_tokens: tokens.live,
          connection_tokens_resealed: tokens.resealed,
        });
      });
    });
}

/**
 * Streams holding an event of this type, in log order. The scans of this file are catch-up reads
 * (on KurrentDB from a secondary index, which trails the log by moments): what is written after
 * every process took the new key is sealed under it already.
 */
async function streamsWith(ctx: AppContext, eventType: string): Promise<Set<string>> {
  const streams = new Set<string>();
  for (let after = 0; ; ) {
    const page = await ctx.eventStore.readAll({ after, maxCount: 1000, filter: { eventTypes: [eventType] }, consistency: 'catch-up' });
    if (page.length === 0) break;
    for (const e of page) streams.add(e.streamName);
    after = page[page.length - 1]!.globalPosition;
  }
  return streams;
}

/** Every endpoint not deleted gets its secret sealed under the current key, as an event on its stream. */
async function resealWebhookSecrets(ctx: AppContext): Promise<{ live: number; resealed: number }> {
  let live = 0;
  let resealed = 0;
  const at = new Date().toISOString();
  for (let after = 0; ; ) {
    const page = await ctx.eventStore.readAll({ after, maxCount: 1000, filter: { eventTypes: ['webhook_endpoint.created'] }, consistency: 'catch-up' });
    if (page.length === 0) break;
    for (const e of page) {
      const r = await resealWebhookSecret(ctx.eventStore, ctx.webhookSecrets, { endpointId: (e.data as { endpoint_id: string }).endpoint_id, at });
      if (r.live) live++;
      if (r.resealed) resealed++;
    }
    after = page[page.length - 1]!.globalPosition;
  }
  return { live, resealed };
}

type Ids = { tenant_id?: string; user_id?: string; provider?: string };

/** Runs `reseal` once per distinct owner named by events of this type (a reconnect names it again). */
async function resealEach(
  ctx: AppContext,
  eventType: string,
  owner: (d: Ids) => string,
  reseal: (d: Ids) => Promise<{ live: boolean; resealed: boolean }>,
): Promise<{ live: number; resealed: number }> {
  const seen = new Set<string>();
  let live = 0;
  let resealed = 0;
  for (let after = 0; ; ) {
    const page = await ctx.eventStore.readAll({ after, maxCount: 1000, filter: { eventTypes: [eventType] }, consistency: 'catch-up' });
    if (page.length === 0) break;
    for (const e of page) {
      const d = e.data as Ids;
      if (seen.has(owner(d))) continue;
      seen.add(owner(d));
      const r = await reseal(d);
      if (r.live) live++;
      if (r.resealed) resealed++;
    }
    after = page[page.length - 1]!.globalPosition;
  }
  return { live, resealed };
}
