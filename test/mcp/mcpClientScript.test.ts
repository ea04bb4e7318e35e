import { execFile } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOLS } from '../../src/mcp/tools.js';
import { startTestApp, type TestApp } from '../support/server.js';

/**
 * Issue 23: the README's MCP steps use what the repository installs. `npm run mcp-client`
 * (scripts/mcpClient.ts, over the SDK in node_modules) lists tools and prompts, calls a tool, and
 * bridges a stdio client to the service.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
let t: TestApp;
let url: string;
let token: string;

beforeAll(async () => {
  t = await startTestApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  url = `http://127.0.0.1:${address.port}/mcp`;
  const tenant = await t.createTenant('mcp-client');
  const user = await t.createUser(tenant.apiKey);
  token = (await t.mintToken(tenant.apiKey, user.id, { scopes: ['read'] })).token;
});
afterAll(async () => {
  await t?.close();
});

function script(env: Record<string, string>, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['--import', 'tsx', 'scripts/mcpClient.ts', ...args], { cwd: root, env: { ...process.env, ...env }, timeout: 30_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    }),
  );
}

describe('npm run mcp-client (issue 23: MCP from what the repository installs)', () => {
  it('lists every tool and prompt of the service', async () => {
    const tools = await script({}, '--url', url, '--token', token, 'tools');
    expect(tools.code, tools.stderr).toBe(0);
    expect(tools.stdout.trim().split('\n').map((l) => l.split('  ')[0])).toEqual(TOOLS.map((x) => x.name));
    const prompts = await script({}, '--url', url, '--token', token, 'prompts');
    expect(prompts.stdout).toMatch(/^compare_sources\(user_id, metric\) {2}/m);
  });

  it('calls a tool with JSON arguments and prints its answer; a refusal is a tool error on stderr with exit 1; the token may come from TOKEN', async () => {
    const answer = await script({ TOKEN: token }, '--url', url, 'call', 'get_samples', '{"type":"heart_rate","limit":2}');
    expect(answer.code, answer.stderr).toBe(0);
    expect(JSON.parse(answer.stdout)).toEqual({ records: [], next_cursor: null, truncated: false });
    const refused = await script({ TOKEN: token }, '--url', url, 'call', 'get_samples', '{"type":"heart_rate","limit":5000}');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^tool error: /);
    const none = await script({ TOKEN: '' }, '--url', url, 'tools');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no credential');
  });

  it('bridges a client speaking MCP over stdio to the service (a desktop client\'s set-up)', async () => {
    const client = new Client({ name: 'bridge-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({ command: process.execPath, args: ['--import', 'tsx', 'scripts/mcpClient.ts', '--url', url, 'bridge'], cwd: root, env: { ...(process.env as Record<string, string>), TOKEN: token }, stderr: 'pipe' }),
    );
    expect((await client.listTools()).tools.map((x) => x.name)).toEqual(TOOLS.map((x) => x.name));
    const r = (await client.callTool({ name: 'get_coverage', arguments: {} })) as { content: { text: string }[] };
    expect(JSON.parse(r.content[0]!.text)).toMatchObject({ records: [], pending_jobs: 0 });
    await client.close();
  });

  it('issue 36 §7: without --url it reaches the service at WELLSTREAM_URL (the demo block exports it), before HOST and PORT', async () => {
    const run = await script({ TOKEN: token, WELLSTREAM_URL: url.replace(/\/mcp$/, ''), PORT: '1' }, 'tools');
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim().split('\n').map((l) => l.split('  ')[0])).toEqual(TOOLS.map((x) => x.name));
  });

  it('issue 36 §7: a service it cannot reach is named with the address tried (from PORT here) and how to point elsewhere, not "fetch failed"', async () => {
    const s = createServer();
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    const port = (s.address() as AddressInfo).port;
    await new Promise((r) => s.close(r));
    const run = await script({ TOKEN: token, PORT: String(port), HOST: '' }, 'tools');
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`error: cannot reach the service at http://127.0.0.1:${port}/mcp: connect ECONNREFUSED 127.0.0.1:${port}; is it running? set --url or WELLSTREAM_URL (or HOST and PORT)\n`);
  });
});
