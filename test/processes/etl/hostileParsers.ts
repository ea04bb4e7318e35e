import type { DeviceParser, ParseContext } from '../../../commands/ingestion/records.js';
import { healthConnectParser } from '../../../src/sources/files/device-b/healthConnectParser.js';

/**
 * Parsers an ETL thread of the tests loads over the registry's (EtlThreadData `parsersModule`):
 * device-b as the service parses it, except for payloads that start with one of these runs of
 * whitespace (still valid JSON, so the upload is accepted): one decoder then never ends, the
 * other allocates until its thread is out of memory. They stand for a hostile file the real
 * decoders have no bound for yet.
 */
export const SPIN_FOREVER = Buffer.from(' \t\t \n');
export const EAT_MEMORY = Buffer.from('\t \t \n');

const hoard: number[][] = [];

function spin(): never {
  for (;;) {
    // A decoder stuck in synchronous work: only terminating its thread stops it.
  }
}

function eat(): never {
  for (;;) hoard.push(new Array<number>(100_000).fill(hoard.length));
}

export const parsers: Record<string, DeviceParser> = {
  'device-b': {
    slug: 'device-b',
    async *parse(payload: Buffer, ctx: ParseContext) {
      if (payload.subarray(0, SPIN_FOREVER.length).equals(SPIN_FOREVER)) spin();
      if (payload.subarray(0, EAT_MEMORY.length).equals(EAT_MEMORY)) eat();
      yield* healthConnectParser.parse(payload, ctx);
    },
  },
};
