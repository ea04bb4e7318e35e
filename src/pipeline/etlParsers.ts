import type { DeviceParser } from '../../commands/ingestion/records.js';
import { deviceParsers } from '../connectors/devices/index.js';
import { demoParser } from '../demo/demoParser.js';

/** Every payload the ETL can normalise: device uploads, and the demo personas' recipes (src/demo). */
export const etlParsers: Readonly<Record<string, DeviceParser>> = { ...deviceParsers, [demoParser.slug]: demoParser };
