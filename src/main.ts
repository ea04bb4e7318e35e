import { resolve } from 'node:path';
import { createContext } from './app/context.js';
import { createLogger } from './app/logger.js';
import { ConfigError, loadConfig } from './config.js';
import { stopOnSignals } from './app/shutdown.js';
import { ETL_JOB_KINDS } from './processes/etl/etlWorker.js';
import { buildServer } from './server/buildServer.js';
import { allowDemoWebhookTargets, startDemoSandbox } from './demo/demoConnections.js';
import { setUpDemo } from './demo/demoStart.js';

/** Set by the first SIGINT or SIGTERM: what fails afterwards fails because the stop closed it. */
let stopRequested = false;

/** `npm start`: the service on the configured backends (embedded SQLite under DATA_DIR by default). */
async function main() {
  const demo = process.argv.includes('--demo') || ['1', 'true'].includes((process.env.DEMO ?? '').toLowerCase());
  // The demo brings its own provider sandbox when no provider is configured (src/demo/demoConnections.ts).
  const sandbox = demo ? await startDemoSandbox(process.env) : null;
  if (demo) allowDemoWebhookTargets(process.env);
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`configuration error: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }
  const log = createLogger(config.logLevel);
  const ctx = await createContext(config, { log });
  if (ctx.generatedAdminKey && !demo) {
    // Printed once, on the start that generated it; afterwards it is only in DATA_DIR/admin.key.
    // A demo start shows it in its own block instead, after the logs of its set-up.
    process.stdout.write(
      `\nGenerated the instance admin key (saved to ${resolve(config.dataDir)}/admin.key, mode 0600):\n\n  ${ctx.generatedAdminKey}\n\n` +
        `Next, in a second terminal: npm run cli -- tenants create acme\n\n`,
    );
  }
  const app = await buildServer(ctx);
  // Requests under way, for the shutdown's log line.
  let openRequests = 0;
  app.server.on('request', (_req, res) => {
    openRequests++;
    res.once('close', () => openRequests--);
  });
  // From here on a signal stops the service gracefully, the demo's set-up included.
  const onSignal = stopOnSignals({
    log,
    pending: () => {
      const jobs = ctx.jobs.activeByKind();
      const imports = ETL_JOB_KINDS.reduce((n, kind) => n + (jobs[kind] ?? 0), 0);
      const others = Object.values(jobs).reduce((n, count) => n + count, 0) - imports;
      return { imports, jobs: others, pulls: ctx.sync.active, requests: openRequests };
    },
    stop: async () => {
      await Promise.all([app.close(), ctx.close()]);
      await sandbox?.close();
    },
    exit: (code) => process.exit(code),
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, (s) => {
      stopRequested = true;
      onSignal(s);
    });
  }
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EADDRINUSE' && code !== 'EACCES') throw err;
    // One line naming the setting to change, not the listen error's stack (issue 36 point 7).
    const address = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
    const why = code === 'EADDRINUSE' ? 'the address is in use (another Wellstream, or another program, listens there)' : 'this user may not listen on that port';
    process.stderr.write(`cannot listen on ${address}: ${why}; stop the other one, or choose another port with PORT (e.g. PORT=${config.port + 1} npm start) or address with HOST\n`);
    await ctx.close();
    await sandbox?.close();
    process.exit(1);
  }
  // The absolute directory: what `npm run cli -- --data-dir` needs to work on this store.
  log.info({ backend: config.backend.kind, dataDir: resolve(config.dataDir) }, 'wellstream listening');
  // `npm start -- --demo` or DEMO=1: a demo tenant with synthetic users (src/demo/demoStart.ts).
  if (demo) {
    const address = app.server.address();
    const port = typeof address === 'object' && address ? address.port : config.port;
    const host = ['0.0.0.0', '::', ''].includes(config.host) ? 'localhost' : config.host;
    const baseUrl = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    const block = await setUpDemo(ctx, baseUrl, { sandbox: sandbox?.urls ?? null, adminKey: ctx.generatedAdminKey }).catch((err: unknown) => {
      // The block would have shown the generated admin key: a failed set-up must not swallow it.
      if (ctx.generatedAdminKey) process.stdout.write(`\nGenerated the instance admin key (saved to ${resolve(config.dataDir)}/admin.key): ${ctx.generatedAdminKey}\n`);
      throw err;
    });
    process.stdout.write(block);
  }

}

main().catch((err) => {
  // The demo's set-up, cut short by the stop: the stop ends the process.
  if (stopRequested) return;
  process.stderr.write(`fatal: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
