import type { TestProject } from 'vitest/node';

/** KurrentDB 26.0, the current long-term-support release. */
export const KURRENTDB_IMAGE = 'docker.kurrent.io/kurrent-lts/kurrentdb:26.0.3';

type Backends = { eventstoreUrl: string; mongodbUrl: string; stops: (() => Promise<unknown>)[] };

/**
 * The run's backends, shared by the projects of vitest.config.ts: each project calls this setup,
 * and the containers must start once and stop after the last project's teardown.
 */
const run = globalThis as { wellstreamBackends?: Promise<Backends>; wellstreamBackendUsers?: number };

/**
 * Decides once per run whether the production backends can be tested: explicit
 * EVENTSTORE_URL / MONGODB_URL, or containers started through a reachable Docker engine.
 * Without either, the backend suites skip with one line saying why.
 */
export default async function setup(project: TestProject) {
  run.wellstreamBackends ??= startBackends();
  run.wellstreamBackendUsers = (run.wellstreamBackendUsers ?? 0) + 1;
  const { eventstoreUrl, mongodbUrl, stops } = await run.wellstreamBackends;
  project.provide('eventstoreUrl', eventstoreUrl);
  project.provide('mongodbUrl', mongodbUrl);
  return async () => {
    run.wellstreamBackendUsers! -= 1;
    if (run.wellstreamBackendUsers! > 0) return;
    for (const stop of stops) await stop();
  };
}

async function startBackends(): Promise<Backends> {
  let eventstoreUrl = process.env.EVENTSTORE_URL ?? '';
  let mongodbUrl = process.env.MONGODB_URL ?? '';
  let reason = '';
  const stops: (() => Promise<unknown>)[] = [];

  if (!eventstoreUrl || !mongodbUrl) {
    try {
      const { GenericContainer, Wait, getContainerRuntimeClient } = await import('testcontainers');
      await getContainerRuntimeClient();
      if (!eventstoreUrl) {
        // The image docker-compose.yml and CI run (test/deploy/composeProfiles.test.ts keeps them equal).
        const kurrent = await new GenericContainer(KURRENTDB_IMAGE)
          .withEnvironment({
            KURRENTDB_INSECURE: 'true',
            KURRENTDB_CLUSTER_SIZE: '1',
            KURRENTDB_RUN_PROJECTIONS: 'None',
          })
          .withExposedPorts(2113)
          .withWaitStrategy(Wait.forHttp('/health/live', 2113).forStatusCode(204))
          .start();
        stops.push(() => kurrent.stop());
        eventstoreUrl = `kurrentdb://${kurrent.getHost()}:${kurrent.getMappedPort(2113)}?tls=false`;
      }
      if (!mongodbUrl) {
        const mongo = await new GenericContainer('mongo:7').withExposedPorts(27017).withWaitStrategy(Wait.forLogMessage(/Waiting for connections/)).start();
        stops.push(() => mongo.stop());
        mongodbUrl = `mongodb://${mongo.getHost()}:${mongo.getMappedPort(27017)}`;
      }
    } catch (err) {
      reason = err instanceof Error ? err.message.split('\n')[0]! : String(err);
    }
  }

  if (!eventstoreUrl || !mongodbUrl) {
    const missing = [!eventstoreUrl && 'KurrentDB', !mongodbUrl && 'MongoDB'].filter(Boolean).join(' and ');
    console.log(`[backends] ${missing} contract suites skipped: no Docker engine and no EVENTSTORE_URL/MONGODB_URL (${reason || 'not set'})`);
  }
  return { eventstoreUrl, mongodbUrl, stops };
}

declare module 'vitest' {
  export interface ProvidedContext {
    eventstoreUrl: string;
    mongodbUrl: string;
  }
}
