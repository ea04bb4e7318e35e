import type { DeviceParser } from '../../commands/ingestion/records.js';
import type { PullConnector, PushConnector } from './pullConnector.js';

/** The connectors of this build, by provider slug (one line each; their code is in src/connectors/<slug>/). */
export const PULL_CONNECTORS: Readonly<Partial<Record<string, PullConnector>>> = {};

export const PUSH_CONNECTORS: Readonly<Partial<Record<string, PushConnector>>> = {};

/** The connectors' decoders, for the ETL (src/pipeline/etlParsers.ts). */
export const connectorParsers: Readonly<Record<string, DeviceParser>> = Object.fromEntries(
  [...Object.values(PULL_CONNECTORS), ...Object.values(PUSH_CONNECTORS)].map((c) => [c!.descriptor.slug, c!.parser]),
);
