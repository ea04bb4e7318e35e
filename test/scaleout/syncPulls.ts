import { sandboxData } from '../../src/sandbox/data/index.js';
import { fetchGet, consentThroughSandbox } from '../../src/sandbox/consentBrowser.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { sandboxSettings } from '../../src/sandbox/sandboxSettings.js';
import type { EventStore, RecordedEvent } from '../../src/eventstore/eventStore.js';
import { ABANDONED } from '../../commands/sync/syncRunTransitions.js';
import { SYNC_RUN_PREFIX } from '../../commands/sync/syncRun.js';

/**
 * The provider side of the multi-process test's pulls (issue 26): the sandbox's Oura, whose data
 * answers wait behind a gate (each at most HOLD_MS, below the service's call time-out), so pulls
 * are in progress (their leases held and renewed) until the test opens it, and a process can be
 * killed in the middle of one.
 */
const HOLD_MS = 8_000;

export type GatedSandbox = { sandbox: Sandbox; env: Record<string, string>; release(): void; requests: () => number };

export async function gatedOura(): Promise<GatedSandbox> {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  let requests = 0;
  const oura = sandboxData().oura!;
  const sandbox = await startSandbox({
    data: {
      oura: async (ctx) => {
        // The connect's own call (who the user is) passes; a pull's calls wait, each at most
        // HOLD_MS (under the service's call time-out), so a pull crawls on until the gate opens.
        if (!ctx.path.endsWith('/personal_info')) {
          requests++;
          await Promise.race([gate, new Promise((r) => setTimeout(r, HOLD_MS))]);
        }
        return oura(ctx);
      },
    },
  });
  return { sandbox, env: { ...sandboxSettings(sandbox, ['oura']), SYNC_BACKFILL_DAYS: '2' }, release: () => open(), requests: () => requests };
}

/** Connects a user to Oura through a service process, as a browser would (start, sandbox consent, callback). */
export async function connectOura(baseUrl: string, apiKey: string, userId: string): Promise<void> {
  const res = await fetch(`${baseUrl}/v1/users/${userId}/connections/oura`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: '{}' });
  if (res.status !== 200) throw new Error(`connecting ${userId}: ${res.status} ${await res.text()}`);
  const { authorize_url: authorizeUrl } = (await res.json()) as { authorize_url: string };
  const flow = await consentThroughSandbox(authorizeUrl, fetchGet(baseUrl));
  if (flow.callback.status >= 400) throw new Error(`the consent callback answered ${flow.callback.status}: ${flow.callback.body}`);
}

type Attempt = { stream: string; worker: string; ended: 'succeeded' | 'failed' | 'cancelled' | 'abandoned' | 'retrying' | null };

/** Every attempt of every pull, from the runs' streams in log order: who started it and how it ended. */
export async function pullAttempts(events: EventStore): Promise<Attempt[]> {
  type RunEvent = RecordedEvent<{ type: string; data: { worker?: string; error?: string } }>;
  const all = (await events.readAll({ maxCount: 100_000 })).filter((e) => e.streamName.startsWith(SYNC_RUN_PREFIX)) as unknown as RunEvent[];
  const open = new Map<string, Attempt>();
  const attempts: Attempt[] = [];
  for (const e of all) {
    const current = open.get(e.streamName);
    const end = (ended: Attempt['ended']) => {
      if (current) current.ended = ended;
      open.delete(e.streamName);
    };
    if (e.type === 'sync.run_started') {
      const a: Attempt = { stream: e.streamName, worker: e.data.worker ?? '', ended: null };
      attempts.push(a);
      open.set(e.streamName, a);
    } else if (e.type === 'sync.run_attempt_failed') end(e.data.error === ABANDONED ? 'abandoned' : 'retrying');
    else if (e.type === 'sync.run_succeeded') end('succeeded');
    else if (e.type === 'sync.run_failed') end('failed');
    else if (e.type === 'sync.run_cancelled') end('cancelled');
  }
  return attempts;
}
