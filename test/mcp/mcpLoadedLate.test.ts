import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startTestApp, type TenantHandle, type TestApp } from '../support/server.js';

/**
 * The MCP SDK and the service's tools are loaded at the first request to /mcp, not with the
 * service (src/server/routes/mcp.ts, docs/memory.md "The 1M ingest's peak"): ~3.7 MiB of the HTTP
 * thread's heap that a service no agent calls never holds.
 */
const loaded = vi.hoisted(() => ({ tools: 0 }));
vi.mock('../../src/mcp/mcpServer.js', async (original) => {
  loaded.tools++;
  return original();
});

let t: TestApp;
let tenant: TenantHandle;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await t.createTenant('mcp-late');
});
afterAll(async () => {
  await t.close();
});

describe('the agent interface is loaded when first called (issue 38, memory)', () => {
  it('a started service has not loaded the MCP tools; the first POST /mcp loads them, once', async () => {
    expect(loaded.tools).toBe(0);
    const call = (id: number) =>
      t.app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: { jsonrpc: '2.0', id, method: 'tools/list', params: {} },
      });
    const first = await call(1);
    expect(first.statusCode).toBe(200);
    expect((first.json() as { result: { tools: unknown[] } }).result.tools.length).toBeGreaterThan(0);
    expect(loaded.tools).toBe(1);
    expect((await call(2)).statusCode).toBe(200);
    expect(loaded.tools).toBe(1);
  });
});
