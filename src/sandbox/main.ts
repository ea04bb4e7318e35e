import { CONNECTED_PROVIDERS } from '../catalog/providers.js';
import { sandboxSettings } from './sandboxSettings.js';
import { sandboxPorts } from './sandboxPorts.js';
import { CONTROL_PATH, startSandbox } from './sandboxServer.js';

/**
 * `npm run sandbox`: every provider on its own port from SANDBOX_PORT (default 9100), in the
 * order of GET /v1/providers. Prints the settings that point the service at it.
 */
let ports: Record<string, number>;
try {
  ports = sandboxPorts(process.env);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exit(1);
}
const sandbox = await startSandbox({ host: process.env.SANDBOX_HOST ?? '127.0.0.1', ports });
process.stdout.write('Provider sandbox running. Start the service with:\n\n');
for (const p of CONNECTED_PROVIDERS) {
  const settings = Object.entries(sandboxSettings(sandbox, [p.slug])).map(([k, v]) => `${k}=${v}`);
  process.stdout.write(`${settings.join(' ')} \\\n`);
}
process.stdout.write(`  npm start\n\nMake a provider fail: curl -X POST '${sandbox.urls.oura}${CONTROL_PATH}?action=fail&kind=rate_limited&times=2'\n`);
const stop = () => void sandbox.close().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
