import type { Command } from 'commander';
import { printJson, withContext, type OpenContext } from './shared.js';

/**
 * `datakeys reseal`: the second half of a SEALING_KEY rotation (docs/erasure.md). With the new key
 * in SEALING_KEY and the old one in SEALING_KEY_PREVIOUS, every data key still sealed under the
 * old one is sealed again under the new one; afterwards the old key can be dropped.
 */
export function registerDataKeysCommands(program: Command, open: OpenContext): void {
  const group = program.command('datakeys').description('per user and provider data keys (docs/erasure.md)');

  group
    .command('reseal')
    .description('seal every live data key under the current SEALING_KEY; prints {"keys","resealed"}')
    .action(async () => {
      await withContext(open, { runBackground: false }, async (ctx) => {
        const streams = new Set<string>();
        for (let after = 0; ; ) {
          const page = await ctx.eventStore.readAll({ after, maxCount: 1000, filter: { eventTypes: ['datakey.issued'] } });
          if (page.length === 0) break;
          for (const e of page) streams.add(e.streamName);
          after = page[page.length - 1]!.globalPosition;
        }
        let resealed = 0;
        for (const stream of streams) if (await ctx.dataKeys.reseal(stream)) resealed++;
        printJson({ keys: streams.size, resealed });
      });
    });
}
