import { resolveSealingKey } from '../app/dataDir.js';
import type { Config } from '../config.js';
import type { EventStore } from '../eventstore/eventStore.js';
import { DataKeys } from './dataKeys.js';
import { SealingKeyring } from './sealingKeys.js';

/**
 * The data keys as every thread opens them (HTTP, ETL, projector): from the event store it uses
 * and the sealing keys of the configuration. A configuration crosses into threads by structured
 * clone, which turns its Buffers into plain byte arrays; both are taken.
 */
export function dataKeysOf(config: Config, eventStore: EventStore): DataKeys {
  const current = resolveSealingKey(config.dataDir, config.sealingKey ? Buffer.from(config.sealingKey) : undefined);
  return new DataKeys(eventStore, new SealingKeyring(current, (config.previousSealingKeys ?? []).map((k) => Buffer.from(k))));
}
