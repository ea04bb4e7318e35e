import type { DeviceParser } from '../../commands/ingestion/records.js';
import { CONNECTED_PROVIDERS } from '../catalog/providers.js';
import type { ImportDecoder } from './files/importSource.js';
import type { ProviderDescriptor } from './shared/providerDescriptor.js';
import type { PullConnector, PushConnector } from './shared/pullConnector.js';
import { DEMO_PARSER_LOADER, DEVICE_PARSER_LOADERS, IMPORT_DECODER_LOADERS, PULL_CONNECTOR_LOADERS, PUSH_CONNECTOR_LOADERS } from './sourceLoaders.js';

/**
 * Every source of this build loaded (their list, one line each, is sourceLoaders.ts), for the
 * threads that serve them all: the routes, the connections, the sync. An ETL thread loads only
 * the one its job needs.
 */
const loadAll = async <T>(loaders: Readonly<Record<string, () => Promise<T>>>): Promise<Record<string, T>> =>
  Object.fromEntries(await Promise.all(Object.entries(loaders).map(async ([slug, load]) => [slug, await load()] as const)));
const [importDecoderFactories, loadedDeviceParsers, pullConnectors, pushConnectors, demoParser] = await Promise.all([
  loadAll(IMPORT_DECODER_LOADERS),
  loadAll(DEVICE_PARSER_LOADERS),
  loadAll(PULL_CONNECTOR_LOADERS),
  loadAll(PUSH_CONNECTOR_LOADERS),
  DEMO_PARSER_LOADER(),
]);

export const deviceParsers: Readonly<Record<string, DeviceParser>> = loadedDeviceParsers;

/**
 * The native exports (contracts §13); `tempDir` is where a decoder that cannot read its format as a
 * stream (a database inside a zip) copies it while reading (under DATA_DIR, emptied at start-up).
 */
export function importDecoders(tempDir: string): Readonly<Record<string, ImportDecoder>> {
  return Object.fromEntries(Object.entries(importDecoderFactories).map(([slug, make]) => [slug, make(tempDir)]));
}

/** The import slugs of `POST /v1/ingest/{slug}` and of resumable uploads. */
export const IMPORT_SLUGS = Object.keys(IMPORT_DECODER_LOADERS) as readonly string[];

export const PULL_CONNECTORS: Readonly<Partial<Record<string, PullConnector>>> = pullConnectors;

export const PUSH_CONNECTORS: Readonly<Partial<Record<string, PushConnector>>> = pushConnectors;

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
