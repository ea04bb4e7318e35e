import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig, type Config } from '../config.js';
import { CliError } from './shared.js';

/** The CLI's own options that choose the store (program options, before or after the command). */
export type StoreOptions = { dataDir?: string; init?: boolean };

/** The embedded store's event log: the file whose presence says "a store lives here". */
export const EVENT_LOG_FILE = 'events.sqlite';

/**
 * The configuration the CLI opens (issue 23, "one store for every command"): the service's own
 * settings (DATA_DIR with the same default, EVENTSTORE_URL/MONGODB_URL), `--data-dir` over
 * DATA_DIR. On the embedded default a directory without an event log is refused unless `--init`
 * asks for a new store: a command run without the service's DATA_DIR would otherwise make a
 * second store with an admin key and tenants of its own that the running service never sees.
 */
export function cliConfig(env: NodeJS.ProcessEnv, options: StoreOptions): Config {
  const config = loadConfig(options.dataDir !== undefined ? { ...env, DATA_DIR: options.dataDir } : env);
  if (config.backend.kind !== 'embedded' || options.init) return config;
  const dir = resolve(config.dataDir);
  if (existsSync(join(dir, EVENT_LOG_FILE))) return config;
  const from = options.dataDir !== undefined ? '--data-dir' : env.DATA_DIR ? 'DATA_DIR' : 'the default ./data (DATA_DIR is unset)';
  throw new CliError(
    [
      `no Wellstream store in ${dir} (from ${from}).`,
      'The CLI works on the running service\'s store: give it the service\'s DATA_DIR, as `DATA_DIR=<dir> npm run cli -- …` or `npm run cli -- --data-dir <dir> …`',
      '(the service logs its data directory when it starts: "wellstream listening", dataDir).',
      'To create a new, empty store there instead, add --init.',
    ].join('\n'),
  );
}
