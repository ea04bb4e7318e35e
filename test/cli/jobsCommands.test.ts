import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobRunner } from '../../src/processes/jobs/jobRunner.js';
import { reactorDeadLetters, reactorJobHandler, reactorJobKind } from '../../src/processes/jobs/reactorJobs.js';
import { defineReactor, ReactorRuntime } from '../../src/projector/reactor.js';
import type { Event } from '../../src/eventstore/eventStore.js';
import { startTestApp, type TestApp } from '../support/server.js';
import { jsonLines, runCli } from './cliProcess.js';

/**
 * Issue 26 acceptance: "a reactor handler that always throws is dead-lettered and the reactor
 * moves on; `npm run cli -- jobs dead-letters` lists it and `... replay` runs it again".
 * A reactor of the test's own reacts to `test.poked`; while `broken`, it throws on poisoned
 * events. Its dead letters are `reactor.poison` jobs, run by a job runner of the test.
 */
type Poked = Event<'test.poked', { poison: boolean }>;

let t: TestApp;
let reactors: ReactorRuntime;
let runner: JobRunner;
let broken = true;
const handled: number[] = [];

const poison = defineReactor<Poked>({
  name: 'poison',
  eventTypes: ['test.poked'],
  handle: async (event) => {
    if (event.data.poison && broken) throw new Error('poisoned event');
    handled.push(event.globalPosition);
  },
});

beforeAll(async () => {
  t = await startTestApp();
  runner = new JobRunner({ queue: t.ctx.jobs.queue, holder: 'test-runner', leaseMs: 10_000, pollMs: 20 });
  runner.register(reactorJobHandler(t.ctx.eventStore, poison));
  runner.start();
  reactors = new ReactorRuntime(t.ctx.eventStore, t.ctx.readStore, [poison], undefined, undefined, reactorDeadLetters(t.ctx.jobs.queue, () => runner.kick()), 1);
  await reactors.start();
});
afterAll(async () => {
  await reactors?.stop();
  await runner?.stop();
  await t?.close();
});

async function until<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > end) throw new Error(`${what} did not happen`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('reactor dead letters on the work queue, from the CLI (issue 26)', () => {
  it('a reactor handler that always throws is dead-lettered and the reactor moves on; jobs dead-letters lists it, jobs replay runs it again', { timeout: 90_000 }, async () => {
    const bad = await t.ctx.eventStore.appendToStream('poke-1', [{ type: 'test.poked', data: { poison: true } }]);
    const good = await t.ctx.eventStore.appendToStream('poke-2', [{ type: 'test.poked', data: { poison: false } }]);
    // The reactor moves on past the poisoned event.
    await until('the reactor handled the next event', async () => handled.includes(good.lastPosition));
    expect(handled).not.toContain(bad.lastPosition);
    const [dead] = await until('the dead letter', async () => {
      const list = await t.ctx.jobs.queue.deadLetters({ kind: reactorJobKind('poison') });
      return list.length > 0 && list;
    });

    const listed = await runCli(t.dataDir, 'jobs', 'dead-letters', '--json');
    expect(listed.code, listed.stderr).toBe(0);
    expect(jsonLines(listed)).toEqual([
      expect.objectContaining({ id: dead!.id, kind: 'reactor.poison', key: String(bad.lastPosition), payload: expect.objectContaining({ position: bad.lastPosition, type: 'test.poked', stream: 'poke-1' }), error: 'poisoned event' }),
    ]);
    const table = await runCli(t.dataDir, 'jobs', 'dead-letters');
    expect(table.lines[0]).toMatch(/^ID\s+KIND\s+KEY\s+ATTEMPTS\s+FINISHED_AT\s+ERROR/);
    expect(table.lines[1]).toContain(dead!.id);

    // Fixed: the replay runs the handler again, on the same event.
    broken = false;
    const replay = await runCli(t.dataDir, 'jobs', 'replay', dead!.id);
    expect(replay.code, replay.stderr).toBe(0);
    await until('the replayed event handled', async () => handled.includes(bad.lastPosition));
    await until('the job completed', async () => (await t.ctx.jobs.queue.get(dead!.id))?.state === 'completed');
    expect(jsonLines(await runCli(t.dataDir, 'jobs', 'dead-letters', '--json'))).toEqual([]);
    expect(jsonLines(await runCli(t.dataDir, 'jobs', 'status', '--json'))).toContainEqual({ kind: 'reactor.poison', state: 'completed', count: 1 });

    const again = await runCli(t.dataDir, 'jobs', 'replay', dead!.id);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/no dead job/);
  });

  it('purge removes only the dead letters it is told to', { timeout: 60_000 }, async () => {
    const queue = t.ctx.jobs.queue;
    const ids: string[] = [];
    for (const key of ['a', 'b']) {
      await queue.enqueue({ kind: 'test.purge', key, maxAttempts: 1 });
      const [c] = await queue.claim({ kinds: ['test.purge'], n: 1, holder: 'test', leaseMs: 10_000 });
      await queue.park(c!.lease, { error: 'parked by the test' });
      ids.push(c!.job.id);
    }
    const none = await runCli(t.dataDir, 'jobs', 'purge');
    expect(none.code, none.stderr).toBe(0);
    expect((await queue.deadLetters({ kind: 'test.purge' })).length).toBe(2);
    const one = await runCli(t.dataDir, 'jobs', 'purge', ids[0]!);
    expect(one.stdout).toMatch(/removed 1 dead letter/);
    expect((await queue.deadLetters({ kind: 'test.purge' })).map((j) => j.id)).toEqual([ids[1]]);
    const kind = await runCli(t.dataDir, 'jobs', 'purge', '--kind', 'test.purge');
    expect(kind.stdout).toMatch(/removed 1 dead letter/);
    const bad = await runCli(t.dataDir, 'jobs', 'dead-letters', '--limit', '0');
    expect(bad.code).not.toBe(0);
  });
});
