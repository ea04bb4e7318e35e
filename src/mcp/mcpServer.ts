import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, GetPromptRequestSchema, ListPromptsRequestSchema, ListToolsRequestSchema, McpError, ErrorCode, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { recordAudit } from '../../commands/audit/recordAudit.js';
import { InvalidCursorError } from '../shared/cursor.js';
import { InvalidTimeWindowError } from '../shared/timeWindow.js';
import { HttpProblem } from '../server/problems.js';
import { PROMPTS, renderPrompt } from './prompts.js';
import { TOOL_BY_NAME, TOOLS, ToolRefusal, type ToolCallSummary, type ToolContext } from './tools.js';

type Outcome = 'ok' | 'refused' | 'failed';
const OUTCOME_STATUS: Record<Outcome, number> = { ok: 200, refused: 400, failed: 500 };

const toolError = (message: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: message }] });

/** A refusal's short message; anything else is a fault of the service and stays one. */
function refusalMessage(err: unknown): string | null {
  if (err instanceof ToolRefusal) return err.message;
  if (err instanceof InvalidCursorError) return `invalid cursor: ${err.message}`;
  if (err instanceof InvalidTimeWindowError) return err.message;
  if (err instanceof HttpProblem && err.status < 500) return err.detail;
  return null;
}

const argumentError = (err: z.ZodError) =>
  `invalid arguments: ${err.issues.map((i) => (i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message)).join('; ')}`;

/**
 * One MCP server per HTTP request (stateless Streamable HTTP): the credential was checked by the
 * route, the tools and prompts are fixed, and each tool call is audited with its tool, user,
 * window and credential, never a value it read.
 */
export function buildMcpServer(tc: ToolContext, requestId: string): Server {
  const server = new Server({ name: 'wellstream', version: '0.1.0' }, { capabilities: { tools: {}, prompts: {} } });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: TOOLS.map((t) => ({
      name: t.name,
      description: t.description,
      inputSchema: z.toJSONSchema(t.input, { io: 'input' }) as { type: 'object' },
      annotations: { readOnlyHint: true, openWorldHint: false },
    })),
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    const tool = TOOL_BY_NAME.get(request.params.name);
    // contracts §17: a name no tool has is a JSON-RPC error (-32602, invalid params), as the protocol names it, not a tool result.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${request.params.name}; the tools are ${TOOLS.map((t) => t.name).join(', ')}`);
    const summary: ToolCallSummary = { userId: null, start: null, end: null };
    // A call that failed on a fault of the service is audited too, then answered as a JSON-RPC error.
    let outcome: Outcome = 'failed';
    try {
      const parsed = tool.input.safeParse(request.params.arguments ?? {});
      if (!parsed.success) {
        outcome = 'refused';
        return toolError(argumentError(parsed.error));
      }
      try {
        const answer = await tool.run(tc, parsed.data, summary);
        outcome = 'ok';
        return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
      } catch (err) {
        const message = refusalMessage(err);
        if (message === null) throw err;
        outcome = 'refused';
        return toolError(message);
      }
    } finally {
      await audit(tc, requestId, tool.name, summary, outcome);
    }
  });

  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: PROMPTS.map((p) => ({ name: p.name, description: p.description, arguments: p.arguments.map(({ name, description, required }) => ({ name, description, required })) })),
  }));

  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const prompt = PROMPTS.find((p) => p.name === request.params.name);
    if (!prompt) throw new McpError(ErrorCode.InvalidParams, `unknown prompt ${request.params.name}`);
    return renderPrompt(tc, prompt, request.params.arguments ?? {});
  });

  return server;
}

function windowQuery(s: ToolCallSummary): string {
  const q = new URLSearchParams();
  if (s.start !== null) q.set('start', s.start);
  if (s.end !== null) q.set('end', s.end);
  const text = q.toString();
  return text ? `?${text}` : '';
}

async function audit(tc: ToolContext, requestId: string, tool: string, s: ToolCallSummary, outcome: Outcome) {
  const p = tc.principal;
  await recordAudit(tc.ctx.eventStore, [
    {
      log: p.tenantId,
      actor: p.kind === 'tenant' ? 'tenant' : 'user',
      actor_id: p.kind === 'tenant' ? p.keyId : p.tokenId,
      action: `mcp.${tool}`,
      method: 'POST',
      // The audit route shows no details: the tool and its window read as a path, the user as the target.
      path: `/mcp/tools/${tool}${windowQuery(s)}`,
      status: OUTCOME_STATUS[outcome],
      tenant_id: p.tenantId,
      request_id: requestId,
      target: s.userId,
      details: { tool, user_id: s.userId, start: s.start, end: s.end, credential: p.kind === 'tenant' ? 'tenant_key' : 'user_token', outcome },
      at: new Date().toISOString(),
    },
  ]);
}
