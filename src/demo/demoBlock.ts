import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import { packageRootOf } from '../shared/packageRoot.js';
import { CONTROL_PATH } from '../sandbox/sandboxServer.js';
import { SERVICE_URL_VARIABLE } from '../shared/serviceUrl.js';

export type DemoBlock = {
  baseUrl: string;
  tenant: { id: string; name: string };
  users: { external_ref: string | null; persona: string }[];
  userId: string;
  /** The demo tenant's key when this start created the tenant; null on later starts (keys are stored hashed). */
  apiKey: string | null;
  /** The instance admin key when this start generated it (shown once). */
  adminKey: string | null;
  /** First and last day (exclusive) of the demo data. */
  start: string;
  end: string;
  /** The in-process sandbox's address per provider, and the providers the user was connected to. */
  sandbox: Record<string, string> | null;
  connected: readonly string[];
  /** ETL jobs and pulls still running when the block was printed (the wait for them timed out). */
  stillRunning: number;
  /** Webhook deliveries to loopback and private addresses are allowed (WEBHOOK_ALLOW_PRIVATE_TARGETS). */
  privateWebhooks: boolean;
};

/** Where `npm run cli` looks by default: ./data under the package, where npm runs its scripts (from `src/demo` or `dist/src/demo`). */
const NPM_DEFAULT_DATA_DIR = join(packageRootOf(dirname(fileURLToPath(import.meta.url))) ?? '.', 'data');

/** How `npm run cli` reaches this service's store: the data directory, unless it is the one npm's default finds. */
function cliPrefix(config: Pick<Config, 'dataDir' | 'backend'>): string {
  if (config.backend.kind !== 'embedded' || resolve(config.dataDir) === NPM_DEFAULT_DATA_DIR) return 'npm run -s cli --';
  return `npm run -s cli -- --data-dir ${resolve(config.dataDir)}`;
}

const quote = (url: string) => `"${url}"`;

/**
 * The one block a demo start prints once its background work has settled (issue 23): shell
 * lines with the README's variable names (KEY, USER_ID, and WELLSTREAM_URL, which the CLI's import
 * and `npm run mcp-client` read) that work when pasted into another terminal, the console link,
 * the sandbox's addresses and whether webhooks may go to a local receiver. A later start cannot show the key
 * again (stored hashed), so its KEY line issues a new one through the CLI, saying so.
 */
export function demoBlock(b: DemoBlock, config: Pick<Config, 'dataDir' | 'backend'>): string {
  const user = b.users[0]!;
  const keyLine = b.apiKey
    ? `  export KEY=${b.apiKey}   # the demo tenant's API key, shown this once`
    : `  export KEY=$(${cliPrefix(config)} keys issue ${b.tenant.id} | jq -r .api_key)   # a new API key of the demo tenant (its first was shown once, on the first demo start)`;
  const auth = '-H "Authorization: Bearer $KEY"';
  const second = b.connected.length > 0 ? `${b.baseUrl}/v1/users/$USER_ID/sync-runs` : `${b.baseUrl}/v1/users/$USER_ID/coverage?start=${b.start}&end=${b.end}`;
  const sandbox = b.sandbox
    ? [
        `Provider sandbox: ${Object.entries(b.sandbox)
          .filter(([slug]) => b.connected.length === 0 || b.connected.includes(slug))
          .map(([slug, url]) => `${slug} ${url}`)
          .join(', ')}; steer one with POST <address>${CONTROL_PATH}?action=…, e.g.`,
        `  curl -s -X POST '${b.sandbox.oura}${CONTROL_PATH}?action=revoke_consent'`,
      ]
    : [];
  const lines = [
    '',
    `Demo ready: tenant "${b.tenant.name}" (${b.tenant.id}), users ${b.users.map((u) => `${u.external_ref} (${u.persona})`).join(', ')}.`,
    `In another terminal, ${user.external_ref}'s merged heart rate per day and ${b.connected.length > 0 ? `its pulls from ${b.connected.join(' and ')}` : 'its coverage'}:`,
    '',
    keyLine,
    `  export USER_ID=${b.userId}   # ${user.external_ref}`,
    `  export ${SERVICE_URL_VARIABLE}=${b.baseUrl}   # the service's address, read by npm run cli -- import and npm run mcp-client`,
    `  curl -s ${quote(`${b.baseUrl}/v1/users/$USER_ID/samples/stats?type=heart_rate&interval=day&start=${b.start}&end=${b.end}`)} ${auth}`,
    `  curl -s ${quote(second)} ${auth}`,
    '',
    `Console: ${b.baseUrl}/console/#/users/${b.userId} (sign in with KEY)`,
    ...sandbox,
    ...(b.privateWebhooks
      ? ['Webhooks may go to a receiver on this machine or a private network (http://127.0.0.1:…): this demo sets WEBHOOK_ALLOW_PRIVATE_TARGETS=true; a start without --demo refuses them.']
      : []),
    ...(b.adminKey ? [`Instance admin key (shown this once; kept in ${resolve(config.dataDir)}/admin.key): ${b.adminKey}`] : []),
    ...(b.stillRunning > 0 ? [`(${b.stillRunning} ETL jobs and pulls are still running; their logs follow.)`] : []),
    '',
    '',
  ];
  return lines.join('\n');
}
