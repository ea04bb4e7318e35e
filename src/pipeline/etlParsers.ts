import type { DeviceParser } from '../../commands/ingestion/records.js';
import { connectorParsers } from '../connectors/connectorIndex.js';
import { deviceParsers } from '../connectors/devices/index.js';
import { demoParser } from '../demo/demoParser.js';

/** Every payload the ETL can normalise: device uploads, connectors' pulled and pushed payloads, and the demo personas' recipes (src/demo). */
export const etlParsers: Readonly<Record<string, DeviceParser>> = { ...deviceParsers, ...connectorParsers, [demoParser.slug]: demoParser };
