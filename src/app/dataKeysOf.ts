import type { Config } from '../config.js';
import type { EventStore } from '../eventstore/eventStore.js';
import { DataKeys } from '../crypto/dataKeys.js';
import { sealingKeyringOf } from './sealingKeyringOf.js';

/** The data keys as every thread opens them (HTTP, ETL, projector): from the event store it uses and the sealing keys of the configuration. */
export function dataKeysOf(config: Config, eventStore: EventStore): DataKeys {
  return new DataKeys(eventStore, sealingKeyringOf(config));
}
