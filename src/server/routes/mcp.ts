import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { McpPrincipal } from '../../mcp/tools.js';
import type { AppContext } from '../appContext.js';
import { isOwnOrigin } from '../publicAddress.js';
import { HttpProblem, problems } from '../problems.js';
import type { RouteOptions } from './routeOptions.js';
import type { Answer } from '../routeAnswers.js';

const JSON_RPC = 'application/json';
/** What the MCP SDK's transport answers itself: JSON-RPC messages, errors included, as application/json. */
const TRANSPORT_ANSWERS: Record<number, Answer> = {
  200: { description: 'A JSON-RPC response', media: [JSON_RPC] },
  202: { description: 'A notification or response accepted', media: [] },
  400: { description: 'Not JSON-RPC (a JSON-RPC error) or not JSON (a problem)', media: [JSON_RPC] },
  406: { description: 'Accept must list application/json and text/event-stream (a JSON-RPC error)', media: [JSON_RPC] },
  415: { description: 'The body must be application/json', media: [JSON_RPC] },
};

/**
 * The MCP SDK and the service's tools and prompts, loaded at the first request to `/mcp`, not
 * with the service: 3.7 MiB of the HTTP thread's heap (the service's modules, imported and
 * collected: 35.1 MiB with them, 31.4 without), held for the service's life whether an agent ever
 * calls it or not (docs/memory.md, "The 1M ingest's peak"). A failed load is not kept: the next
 * request tries again.
 */
let mcpModules: Promise<[typeof import('../../mcp/mcpServer.js'), typeof import('@modelcontextprotocol/sdk/server/streamableHttp.js')]> | null = null;
function loadMcp() {
  mcpModules ??= Promise.all([import('../../mcp/mcpServer.js'), import('@modelcontextprotocol/sdk/server/streamableHttp.js')]).catch((err: unknown) => {
    mcpModules = null;
    throw err;
  });
  return mcpModules;
}

/**
 * Spec "Agent interface (MCP)": a browser page of another site may not drive the agent interface
 * with a credential it holds (Sec-Fetch-Site cross-site, or an Origin other than the service's
 * public address: PUBLIC_BASE_URL, which also stops a page reached through a rebound DNS name).
 */
function refuseCrossOrigin(config: AppContext['config'], request: FastifyRequest) {
  if (request.headers['sec-fetch-site'] === 'cross-site') throw problems.forbidden('cross-origin requests to the agent interface are refused');
  const origin = request.headers.origin;
  if (origin === undefined) return;
  if (!isOwnOrigin(config, request, origin)) throw problems.forbidden('cross-origin requests to the agent interface are refused');
}

/** POST /mcp: stateless Streamable HTTP with JSON answers; GET and DELETE have no session to serve. */
export const mcpRoutes: FastifyPluginAsync<RouteOptions> = async (app, { ctx, cursors }) => {
  app.post(
    '/mcp',
    {
      // Both credentials and the scope are checked before the body is read (contracts §18), and so is the origin.
      // Never opened to CORS_ORIGINS: the agent interface refuses every other origin (above).
      config: { auth: ['tenant', 'user'], scope: 'read', cors: false, answers: TRANSPORT_ANSWERS },
      onRequest: async (request) => refuseCrossOrigin(ctx.config, request),
      schema: {
        summary: 'Agent interface (MCP): JSON-RPC over stateless Streamable HTTP, JSON answers',
        description: "Tenant API key (per-user tools need user_id) or a user token with scope read (its own user only). Tools, prompts and their input schemas are listed by the MCP methods tools/list and prompts/list.",
        tags: ['mcp'],
      },
    }, async (request, reply) => {
    const [{ buildMcpServer }, { StreamableHTTPServerTransport }] = await loadMcp();
    const server = buildMcpServer({ ctx, cursors, principal: request.principal as McpPrincipal }, request.id);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.setHeader('x-request-id', request.id);
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  for (const method of ['GET', 'DELETE'] as const) {
    app.route({
      method,
      url: '/mcp',
      config: { auth: 'none', answers: { 403: { description: 'A cross-origin request' }, 405: { headers: ['allow'] } } },
      schema: { summary: 'Not served: the agent interface is stateless (405)', tags: ['mcp'] },
      handler: async (request) => {
        refuseCrossOrigin(ctx.config, request);
        throw new HttpProblem(405, 'the agent interface is stateless: POST only', { allow: 'POST' });
      },
    });
  }
};
