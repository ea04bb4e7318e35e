import type { DeviceParser } from '../../../commands/ingestion/records.js';
import { connectorParsers } from '../../sources/registry.js';
import { deviceParsers } from '../../sources/files/index.js';
import { demoParser } from '../../sources/files/demo/demoParser.js';

/** Every payload the ETL can normalise: device uploads, connectors' pulled and pushed payloads, and the demo personas' recipes (src/demo). */
export const etlParsers: Readonly<Record<string, DeviceParser>> = { ...deviceParsers, ...connectorParsers, [demoParser.slug]: demoParser };
