import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { Command, InvalidArgumentError } from 'commander';
import { SERVICE_URL_VARIABLE, serviceUrlFromEnv } from '../src/shared/serviceUrl.js';
import { unreachableReason } from '../src/shared/unreachable.js';

/**
 * `npm run mcp-client -- …`: a small MCP client over the SDK the repository installs, to try the
 * agent interface (docs/mcp.md) without anything from outside: list the tools and prompts, call a
 * tool, or bridge a desktop client that speaks MCP over stdio to the service's Streamable HTTP.
 * It reaches the service at --url, else at WELLSTREAM_URL (the demo's block exports it), else
 * the way the service is configured (HOST, PORT).
 */
const program = new Command('mcp-client')
  .description("Talk to Wellstream's MCP endpoint (POST /mcp) with a user token or a tenant key")
  .option('--url <url>', `the MCP endpoint (default: $${SERVICE_URL_VARIABLE}/mcp, else http://HOST:PORT/mcp from the service's settings, else http://127.0.0.1:8080/mcp)`)
  .option('--token <secret>', 'a user token with scope read (svc_ut_…) or a tenant key (svc_sk_…); default: $TOKEN')
  .showHelpAfterError();

type Options = { url?: string; token?: string };

function endpoint(): { url: URL; token: string } {
  const o = program.opts<Options>();
  const token = o.token ?? process.env.TOKEN;
  if (!token) throw new InvalidArgumentError('no credential: pass --token, or set TOKEN');
  const host = process.env.HOST && !['0.0.0.0', '::'].includes(process.env.HOST) ? process.env.HOST : '127.0.0.1';
  const base = serviceUrlFromEnv() ?? `http://${host}:${process.env.PORT ?? 8080}`;
  return { url: new URL(o.url ?? `${base}/mcp`), token };
}

const httpTransport = ({ url, token }: { url: URL; token: string }) =>
  new StreamableHTTPClientTransport(url, { requestInit: { headers: { authorization: `Bearer ${token}` } } });

/** fetch says only "fetch failed": the message names the address tried and how to point elsewhere. */
function unreachable(url: URL, err: unknown): Error | null {
  const reason = unreachableReason(err);
  return reason === null ? null : new Error(`cannot reach the service at ${url.href}: ${reason}; is it running? set --url or ${SERVICE_URL_VARIABLE} (or HOST and PORT)`);
}

async function connected<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'wellstream-mcp-client', version: '1.0.0' });
  const target = endpoint();
  try {
    await client.connect(httpTransport(target));
  } catch (err) {
    throw unreachable(target.url, err) ?? err;
  }
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

program
  .command('tools')
  .description('list the tools: name and the first sentence of the description, one per line')
  .action(() =>
    connected(async (client) => {
      for (const t of (await client.listTools()).tools) process.stdout.write(`${t.name}  ${(t.description ?? '').split('. ')[0]}\n`);
    }),
  );

program
  .command('prompts')
  .description('list the prompts with their arguments, one per line')
  .action(() =>
    connected(async (client) => {
      for (const p of (await client.listPrompts()).prompts) {
        process.stdout.write(`${p.name}(${(p.arguments ?? []).map((a) => a.name).join(', ')})  ${p.description ?? ''}\n`);
      }
    }),
  );

program
  .command('call')
  .description("call a tool and print its answer (the tool's JSON); exit 1 on a tool error")
  .argument('<tool>', 'tool name, e.g. get_coverage')
  .argument('[arguments]', 'the arguments as one JSON object, e.g. \'{"type":"heart_rate"}\'', '{}')
  .action((tool: string, args: string) =>
    connected(async (client) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(args);
      } catch {
        throw new InvalidArgumentError(`arguments are not JSON: ${args}`);
      }
      const answer = (await client.callTool({ name: tool, arguments: parsed as Record<string, unknown> })) as { isError?: boolean; content: { type: string; text?: string }[] };
      const text = answer.content.map((c) => c.text ?? '').join('\n');
      if (answer.isError) {
        process.stderr.write(`tool error: ${text}\n`);
        process.exitCode = 1;
      } else process.stdout.write(`${text}\n`);
    }),
  );

program
  .command('bridge')
  .description('relay MCP between stdio and the service (for desktop clients that start a command, e.g. Claude Desktop); logs nothing on stdout')
  .action(async () => {
    const target = endpoint();
    const http = httpTransport(target);
    const stdio = new StdioServerTransport();
    // Messages pass through unchanged, both ways; the service's refusals reach the client as they are.
    stdio.onmessage = (message) => void http.send(message).catch((err: unknown) => process.stderr.write(`bridge: ${unreachable(target.url, err)?.message ?? String(err)}\n`));
    http.onmessage = (message) => void stdio.send(message);
    http.onerror = (err) => process.stderr.write(`bridge: ${err.message}\n`);
    stdio.onclose = () => void http.close().finally(() => process.exit(0));
    await http.start();
    await stdio.start();
  });

try {
  await program.parseAsync(process.argv);
} catch (err) {
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
}
