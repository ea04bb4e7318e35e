import type { DeviceParser } from '../../commands/ingestion/records.js';
import { CONNECTED_PROVIDERS } from '../catalog/providers.js';
import { healthKitParser } from './files/device-a/healthKitParser.js';
import { healthConnectParser } from './files/device-b/healthConnectParser.js';
import { gadgetbridgeParser } from './files/device-c/gadgetbridgeParser.js';
import { demoParser } from './files/demo/demoParser.js';
import { dexcomConnector } from './providers/dexcom/pull.js';
import { appleHealthDecoder } from './files/apple-health/appleHealthDecoder.js';
import { fitbitTakeoutDecoder } from './files/fitbit-takeout/fitbitTakeoutDecoder.js';
import { createHealthConnectDecoder } from './files/health-connect/healthConnectDecoder.js';
import { samsungHealthDecoder } from './files/samsung-health/samsungHealthDecoder.js';
import { dexcomClarityDecoder } from './files/dexcom-clarity/clarityDecoder.js';
import { fitDecoder } from './files/fit/fitDecoder.js';
import type { ImportDecoder } from './files/importSource.js';
import { fitbitConnector } from './providers/fitbit/pull.js';
import { garminConnector } from './providers/garmin/connector.js';
import { googleConnector } from './providers/google/pull.js';
import { ouraConnector } from './providers/oura/pull.js';
import { polarConnector } from './providers/polar/pull.js';
import { stravaConnector } from './providers/strava/pull.js';
import { whoopConnector } from './providers/whoop/pull.js';
import { withingsConnector } from './providers/withings/pull.js';
import type { ProviderDescriptor } from './shared/providerDescriptor.js';
import type { PullConnector, PushConnector } from './shared/pullConnector.js';

/**
 * The sources of this build, one line each: a file format's parser (its code in
 * src/sources/files/<slug>/, its row in src/catalog/formats.ts), a provider's connector (its code
 * in src/sources/providers/<slug>/, its row in src/catalog/providers.ts).
 */
export const deviceParsers: Readonly<Record<string, DeviceParser>> = {
  'device-a': healthKitParser,
  'device-b': healthConnectParser,
  'device-c': gadgetbridgeParser,
};

/**
 * The native exports (contracts §13), one line each; `tempDir` is where a decoder that cannot read
 * its format as a stream (a database inside a zip) copies it while reading (under DATA_DIR,
 * emptied at start-up).
 */
export function importDecoders(tempDir: string): Readonly<Record<string, ImportDecoder>> {
  return {
    'apple-health': appleHealthDecoder({ tempDir }),
    'health-connect': createHealthConnectDecoder({ tempDir }),
    'fitbit-takeout': fitbitTakeoutDecoder,
    'samsung-health': samsungHealthDecoder,
    'dexcom-clarity': dexcomClarityDecoder,
    fit: fitDecoder({ tempDir }),
  };
}

/** The import slugs of `POST /v1/ingest/{slug}` and of resumable uploads. */
export const IMPORT_SLUGS = Object.keys(importDecoders('')) as readonly string[];

export const PULL_CONNECTORS: Readonly<Partial<Record<string, PullConnector>>> = {
  fitbit: fitbitConnector,
  strava: stravaConnector,
  withings: withingsConnector,
  oura: ouraConnector,
  polar: polarConnector,
  whoop: whoopConnector,
  dexcom: dexcomConnector,
  google: googleConnector,
};

export const PUSH_CONNECTORS: Readonly<Partial<Record<string, PushConnector>>> = {
  garmin: garminConnector,
};

/** The upload routes' `{device_slug}`s. */
export const DEVICE_SLUGS = Object.keys(deviceParsers) as readonly string[];

const CONNECTORS: readonly (PullConnector | PushConnector)[] = [...Object.values(PULL_CONNECTORS), ...Object.values(PUSH_CONNECTORS)].map((c) => c!);

/** A provider's connector, pull or push. */
export function connectorOf(slug: string): PullConnector | PushConnector | null {
  return CONNECTORS.find((c) => c.descriptor.slug === slug) ?? null;
}

/** How the service talks to a provider: its catalog row with its OAuth endpoints. */
export function providerDescriptor(slug: string): ProviderDescriptor | null {
  return connectorOf(slug)?.descriptor ?? null;
}

/** Every connected provider's descriptor, in the catalog's order. */
export const PROVIDER_DESCRIPTORS: readonly ProviderDescriptor[] = CONNECTED_PROVIDERS.map((p) => providerDescriptor(p.slug)!);

/** Every payload the ETL can normalise: uploaded files, connectors' pulled and pushed payloads, and the demo personas' recipes. */
export const etlParsers: Readonly<Record<string, DeviceParser>> = {
  ...deviceParsers,
  ...Object.fromEntries(CONNECTORS.map((c) => [c.descriptor.slug, c.parser])),
  [demoParser.slug]: demoParser,
};
