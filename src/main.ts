import { resolve } from 'node:path';
import { createContext } from './app/context.js';
import { createLogger } from './app/logger.js';
import { ConfigError, loadConfig } from './config.js';
import { buildServer } from './server/buildServer.js';
import { startDemoSandbox } from './demo/demoConnections.js';
import { setUpDemo } from './demo/demoStart.js';

/** `npm start`: the service on the configured backends (embedded SQLite under DATA_DIR by default). */
async function main() {
  const demo = process.argv.includes('--demo') || ['1', 'true'].includes((process.env.DEMO ?? '').toLowerCase());
  // The demo brings its own provider sandbox when no provider is configured (src/demo/demoConnections.ts).
  const sandbox = demo ? await startDemoSandbox(process.env) : null;
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
  await app.listen({ port: config.port, host: config.host });
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

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await app.close();
    await ctx.close();
    await sandbox?.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`fatal: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
