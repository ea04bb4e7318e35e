import pino from 'pino';
import { createContext } from '../app/context.js';
import { createLogger } from '../app/logger.js';
import { buildProgram } from './program.js';
import { describeError, type OpenContext } from './shared.js';
import { cliConfig, type StoreOptions } from './storeLocation.js';

/**
 * Entry of `npm run cli`. stdout carries only the commands' output (JSON lines or tables), so
 * logs go to stderr at level warn, and so do errors: one line, exit code 1.
 */
const open: OpenContext = async ({ runBackground, readCacheMiB }) => {
  const config = cliConfig(process.env, program.opts<StoreOptions>());
  const log = createLogger('warn', pino.destination(2));
  // Projections only: a short command must not start process managers or take over a running server's ETL jobs.
  const ctx = await createContext(config, { log, runBackground: runBackground ? 'projections' : 'none', readCacheMiB });
  if (ctx.generatedAdminKey) {
    // First use of this DATA_DIR: the admin key is shown once (contracts.md §1), here on stderr.
    process.stderr.write(`Generated the admin API key (stored in ${config.dataDir}/admin.key, shown once): ${ctx.generatedAdminKey}\n`);
  }
  return ctx;
};

const program = buildProgram(open);
try {
  await program.parseAsync(process.argv);
} catch (err) {
  const { message, expected } = describeError(err);
  process.stderr.write(`error: ${message}\n`);
  if (!expected && err instanceof Error && err.stack) process.stderr.write(err.stack + '\n');
  process.exitCode = 1;
}

// Everything is closed by now and the process ends by itself once output is flushed; this
// unref'd timer only forces the exit if some handle is unexpectedly left open.
setTimeout(() => process.exit(), 5000).unref();
