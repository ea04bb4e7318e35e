import type { DeviceParser } from '../../../commands/ingestion/records.js';
import { healthKitParser } from './device-a/healthKitParser.js';
import { healthConnectParser } from './device-b/healthConnectParser.js';
import { gadgetbridgeParser } from './device-c/gadgetbridgeParser.js';

/** Device providers (spec "Uploads"): the slug is both the route's `{device_slug}` and the records' `provider`. */
export const deviceParsers: Readonly<Record<string, DeviceParser>> = {
  'device-a': healthKitParser,
  'device-b': healthConnectParser,
  'device-c': gadgetbridgeParser,
};

export const DEVICE_SLUGS = Object.keys(deviceParsers) as readonly string[];
