import type { LayerGroup } from './layerCheck.js';

/**
 * The layers of the service, bottom to top (docs/architecture.md "Layers"). A file may import its
 * own group and any lower layer, never a higher one; the exceptions are named here, with why.
 */
export const LAYERS: readonly LayerGroup[] = [
  { name: 'shared', layer: 0, paths: ['src/shared/'] },
  { name: 'catalog', layer: 1, paths: ['src/catalog/'] },
  // The environment reader: plain settings beside the catalog; composition passes values down from it.
  { name: 'settings', layer: 1, paths: ['src/config.ts'], mayImport: ['catalog'] },
  {
    name: 'ports',
    layer: 2,
    paths: [
      'src/eventstore/eventStore.ts',
      'src/readstore/readStore.ts',
      // The meaning of the read store's update operators, for adapters and queries alike.
      'src/readstore/documentUpdate.ts',
      // The meaning of a rendering template (rows read as answer JSON), for adapters and queries alike.
      'src/readstore/renderedRows.ts',
      // The meaning of runs of days added up (statistics), and the fallback every adapter may use.
      'src/readstore/dayRuns.ts',
      'src/readstore/leases.ts',
      'src/rawstore/rawStore.ts',
      'src/rawstore/rawNamespaces.ts',
      'src/workqueue/workQueue.ts',
      'src/recordledger/recordLedger.ts',
      // What a projection declares: the contract between projections/ and the projector runtime.
      'src/projector/projection.ts',
    ],
  },
  // Sealing over the ports, beside the domain: it takes event names from the catalog, never from commands.
  { name: 'crypto', layer: 3, paths: ['src/crypto/'], mayNotImport: ['settings'] },
  // Decide, evolve, query: never an adapter, a source, a process or the environment.
  { name: 'domain', layer: 3, paths: ['commands/', 'projections/', 'queries/', 'src/merge/', 'src/webhooks/'], mayImport: ['crypto'], mayNotImport: ['settings'] },
  // Pure decoders and provider clients: the record types and the domain's error from the domain, nothing that runs.
  { name: 'sources', layer: 4, paths: ['src/sources/'], typesOnlyFrom: ['domain', 'crypto'], typesOnlyExcept: ['commands/shared/domainError.ts'] },
  { name: 'runtime', layer: 5, paths: ['src/eventstore/', 'src/readstore/', 'src/rawstore/', 'src/projector/', 'src/workqueue/', 'src/recordledger/'] },
  { name: 'processes', layer: 6, paths: ['src/processes/'] },
  { name: 'delivery', layer: 7, paths: ['src/server/', 'src/mcp/', 'src/fhir/', 'src/archive/'], mayNotImport: ['tool'] },
  // A stand-in for the providers' servers (dev and tests): it knows the sources, never the service's surfaces.
  { name: 'tool', layer: 7, paths: ['src/sandbox/'], mayNotImport: ['delivery'] },
  // Wiring: the service, the CLI, the demo, and each worker thread's entry (a composition root of its thread).
  {
    name: 'composition',
    layer: 8,
    paths: ['src/app/', 'src/cli/', 'src/demo/', 'src/main.ts', 'src/projector/projectorThread.ts', 'src/processes/etl/etlThread.ts', 'src/server/untrustedFileCheckProcess.ts'],
  },
];

/** What the graph is read from: the service's code (tests, benchmarks and the console are not layered). */
export const LAYERED_DIRS = ['src', 'commands', 'projections', 'queries'] as const;

/** Where the 450-line rule applies: every source file of the repository but tests and generated data. */
export const SIZED_DIRS = ['src', 'commands', 'projections', 'queries', 'bench', 'console/src', 'scripts'] as const;

export const MAX_FILE_LINES = 450;

/** Generated data: what a generator wrote, not code a person maintains. */
export const GENERATED_DATA: readonly string[] = [
  // The console's answer types, from the OpenAPI document (npm run openapi:types; test/scripts/openapiTypes.test.ts).
  'console/src/api.gen.ts',
];
