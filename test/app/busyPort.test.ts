import { spawn } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { npmStartArgs } from '../../bench/support/service.js';
import { tempDir } from '../support/tmp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Issue 36 §7: `npm start` on a port another program holds printed a raw EADDRINUSE stack
 * without naming PORT. It says in one line which address is taken and which setting to change,
 * and exits 1.
 */
describe('npm start on a busy port (issue 36 §7)', () => {
  it('one line naming the address and PORT, exit 1, no stack', { timeout: 120_000 }, async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: tempDir('wellstream-busy-port-'), PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
      for (const k of ['EVENTSTORE_URL', 'MONGODB_URL', 'SEALING_KEY', 'DEMO', 'ADMIN_API_KEY', 'NODE_OPTIONS']) delete env[k];
      const child = spawn(process.execPath, npmStartArgs(), { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
      const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
      expect(code).toBe(1);
      expect(stderr).toBe(
        `cannot listen on 127.0.0.1:${port}: the address is in use (another Wellstream, or another program, listens there); stop the other one, or choose another port with PORT (e.g. PORT=${port + 1} npm start) or address with HOST\n`,
      );
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  });
});
