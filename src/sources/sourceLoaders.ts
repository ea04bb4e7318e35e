import type { DeviceParser } from '../../commands/ingestion/records.js';
import type { ImportDecoder } from './files/importSource.js';
import type { PullConnector, PushConnector } from './shared/pullConnector.js';

/**
 * The sources of this build, one line each, as loaders: a file format's parser (its code in
 * src/sources/files/<slug>/, its row in src/catalog/formats.ts), a native export's decoder, a
 * provider's connector (its code in src/sources/providers/<slug>/, its row in
 * src/catalog/providers.ts). `registry.ts` loads them all for the threads that serve every source;
 * an ETL thread loads only the one its job needs (`loadEtlParser`): a bulk job's thread used to
 * evaluate every source's modules, ~300 ms of CPU each (BENCHMARKS.md, issue 38).
 */
export const DEVICE_PARSER_LOADERS: Readonly<Record<string, () => Promise<DeviceParser>>> = {
  'device-a': async () => (await import('./files/device-a/healthKitParser.js')).healthKitParser,
  'device-b': async () => (await import('./files/device-b/healthConnectParser.js')).healthConnectParser,
  'device-c': async () => (await import('./files/device-c/gadgetbridgeParser.js')).gadgetbridgeParser,
};

/**
 * The native exports (contracts §13); `tempDir` is where a decoder that cannot read its format as a
 * stream (a database inside a zip) copies it while reading (under DATA_DIR, emptied at start-up).
 */
export const IMPORT_DECODER_LOADERS: Readonly<Record<string, () => Promise<(tempDir: string) => ImportDecoder>>> = {
  'apple-health': async () => {
    const { appleHealthDecoder } = await import('./files/apple-health/appleHealthDecoder.js');
    return (tempDir) => appleHealthDecoder({ tempDir });
  },
  'health-connect': async () => {
    const { createHealthConnectDecoder } = await import('./files/health-connect/healthConnectDecoder.js');
    return (tempDir) => createHealthConnectDecoder({ tempDir });
  },
  'fitbit-takeout': async () => {
    const { fitbitTakeoutDecoder } = await import('./files/fitbit-takeout/fitbitTakeoutDecoder.js');
    return () => fitbitTakeoutDecoder;
  },
  'samsung-health': async () => {
    const { samsungHealthDecoder } = await import('./files/samsung-health/samsungHealthDecoder.js');
    return () => samsungHealthDecoder;
  },
  'dexcom-clarity': async () => {
    const { dexcomClarityDecoder } = await import('./files/dexcom-clarity/clarityDecoder.js');
    return () => dexcomClarityDecoder;
  },
  fit: async () => {
    const { fitDecoder } = await import('./files/fit/fitDecoder.js');
    return (tempDir) => fitDecoder({ tempDir });
  },
};

export const PULL_CONNECTOR_LOADERS: Readonly<Record<string, () => Promise<PullConnector>>> = {
  fitbit: async () => (await import('./providers/fitbit/pull.js')).fitbitConnector,
  strava: async () => (await import('./providers/strava/pull.js')).stravaConnector,
  withings: async () => (await import('./providers/withings/pull.js')).withingsConnector,
  oura: async () => (await import('./providers/oura/pull.js')).ouraConnector,
  polar: async () => (await import('./providers/polar/pull.js')).polarConnector,
  whoop: async () => (await import('./providers/whoop/pull.js')).whoopConnector,
  dexcom: async () => (await import('./providers/dexcom/pull.js')).dexcomConnector,
  google: async () => (await import('./providers/google/pull.js')).googleConnector,
};

export const PUSH_CONNECTOR_LOADERS: Readonly<Record<string, () => Promise<PushConnector>>> = {
  garmin: async () => (await import('./providers/garmin/connector.js')).garminConnector,
};

/** The demo personas' recipes (`POST /v1/demo/users`), normalised by the ETL like an upload. */
export const DEMO_PARSER_LOADER = async (): Promise<DeviceParser> => (await import('./files/demo/demoParser.js')).demoParser;

/**
 * The parser the ETL runs for a payload of `slug` (an upload's device, a connector's pulled or
 * pushed payload, the demo recipes), loaded on first use; null for a slug this build has no parser
 * for. The native exports' decoders are IMPORT_DECODER_LOADERS'.
 */
export async function loadEtlParser(slug: string): Promise<DeviceParser | null> {
  if (Object.hasOwn(DEVICE_PARSER_LOADERS, slug)) return DEVICE_PARSER_LOADERS[slug]!();
  if (Object.hasOwn(PULL_CONNECTOR_LOADERS, slug)) return (await PULL_CONNECTOR_LOADERS[slug]!()).parser;
  if (Object.hasOwn(PUSH_CONNECTOR_LOADERS, slug)) return (await PUSH_CONNECTOR_LOADERS[slug]!()).parser;
  const demo = await DEMO_PARSER_LOADER();
  return demo.slug === slug ? demo : null;
}
