import { Command } from 'commander';
import { registerAuditCommands } from './auditCommands.js';
import { registerConsentsCommands } from './consentsCommands.js';
import { registerDataKeysCommands } from './dataKeysCommands.js';
import { registerJobsCommands } from './jobsCommands.js';
import { registerKeysCommands } from './keysCommands.js';
import { registerProjectionsCommands } from './projectionsCommands.js';
import type { OpenContext } from './shared.js';
import { registerTenantsCommands } from './tenantsCommands.js';
import { registerImportCommand } from './importCommand.js';

/** The `npm run cli` command tree; `open` creates the application context only when a command runs. */
export function buildProgram(open: OpenContext): Command {
  const program = new Command('wellstream')
    .description(
      "Wellstream operator CLI (out-of-band set-up, audit, read-model maintenance). Configured by the same environment as the service (DATA_DIR, EVENTSTORE_URL, MONGODB_URL, ...), so it works on the running service's store.",
    )
    .option('--data-dir <dir>', "the service's DATA_DIR (default: DATA_DIR, else ./data)")
    .option('--init', 'create a new, empty store when the data directory holds none (without it the CLI refuses, so that it never makes a second store by mistake)')
    .showHelpAfterError()
    .configureOutput({ writeOut: (s) => process.stdout.write(s), writeErr: (s) => process.stderr.write(s) });
  registerTenantsCommands(program, open);
  registerKeysCommands(program, open);
  registerAuditCommands(program, open);
  registerProjectionsCommands(program, open);
  registerDataKeysCommands(program, open);
  registerConsentsCommands(program, open);
  registerJobsCommands(program, open);
  registerImportCommand(program, open);
  return program;
}
