import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../bench/support/service.js';
import { sandboxSettings } from '../../src/sandbox/sandboxSettings.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/sandboxServer.js';
import { tempDir } from '../support/tmp.js';
import { answerPattern, commandsOf, resultsOf, scriptOf, sectionOf, type ReadmeCommand } from './readmeCommands.js';

/**
 * Issue 23 acceptance: the README's every command run as written, against a started service.
 * The quick start and the MCP section run in one shell, in a second terminal as the reader's
 * would be, with the environment the service was started with (DATA_DIR for the CLI, PORT for the
 * MCP client); `localhost:8080` points at the service and `/tmp/` at a directory of the test's own.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(join(root, 'README.md'), 'utf8');

const commands: ReadmeCommand[] = [
  ...commandsOf('Quick start', sectionOf(readme, 'Quick start')),
  ...commandsOf('Connecting an MCP client', sectionOf(readme, 'Connecting an MCP client')),
];

/** The test runner's environment without the settings that would point the service or the shell elsewhere. */
function cleanEnv(set: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ['EVENTSTORE_URL', 'MONGODB_URL', 'ADMIN_API_KEY', 'SEALING_KEY', 'DEMO', 'TOKEN', 'KEY', 'USER_ID', 'PUBLIC_BASE_URL', 'WELLSTREAM_URL']) delete env[k];
  return { ...env, ...set };
}

let service: ReturnType<typeof spawn> | null = null;
let sandbox: Sandbox | null = null;
let port = 0;
const dataDir = tempDir('wellstream-readme-');
const scratch = tempDir('wellstream-readme-tmp-');

/**
 * `npm run sandbox` and `npm start` with the sandbox's settings, as the README's own terminals run
 * them ("Connect a provider through the sandbox"), on a fresh store and free ports.
 */
beforeAll(async () => {
  sandbox = await startSandbox();
  // A port chosen before the start: the consent flow's addresses (PUBLIC_BASE_URL's default) name it.
  const listenOn = await freePort();
  service = spawn('npm', ['start'], {
    cwd: root,
    env: cleanEnv({ ...sandboxSettings(sandbox), DATA_DIR: dataDir, PORT: String(listenOn), HOST: '127.0.0.1', LOG_LEVEL: 'info' }),
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: npm, tsx and node stop together.
    detached: true,
  });
  let out = '';
  port = await new Promise<number>((resolve, reject) => {
    service!.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /"msg":"Server listening at http:\/\/127\.0\.0\.1:(\d+)"/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    service!.once('exit', (code) => reject(new Error(`npm start exited ${code}: ${out}`)));
  });
}, 120_000);

afterAll(async () => {
  await sandbox?.close();
  if (!service || service.exitCode !== null) return;
  const exited = new Promise((r) => service!.once('exit', r));
  process.kill(-service.pid!, 'SIGTERM');
  await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  if (service.exitCode === null) process.kill(-service.pid!, 'SIGKILL');
});

describe("the README's commands work as written (issue 23)", () => {
  it('finds the quick start\'s and the MCP section\'s commands; only the service\'s own terminal lines are left to the reader', () => {
    expect(commands.length).toBeGreaterThan(15);
    expect(commands.filter((c) => c.ownTerminal).map((c) => c.text)).toEqual([
      'npm install && npm start -- --demo   # [own terminal]',
      'npm install && npm start   # [own terminal]',
      'npm run sandbox   # [own terminal]',
    ]);
    expect(commands.filter((c) => c.expected.length > 0).length).toBeGreaterThan(6);
  });

  it('runs every other line in order in one shell against the started service: each exits 0 (curl failing on an HTTP error) and prints the answer the README shows', async () => {
    const runnable = commands
      .filter((c) => !c.ownTerminal)
      .map((c) => ({
        ...c,
        // The sandbox's Oura listens where this test's sandbox does, not on 9100.
        text: c.text.replaceAll('localhost:8080', `127.0.0.1:${port}`).replaceAll('/tmp/', `${scratch}/`).replaceAll('http://127.0.0.1:9100', sandbox!.urls.oura!),
      }));
    const { stdout, stderr, code } = await new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve) => {
      const shell = spawn('bash', ['-c', scriptOf(runnable)], {
        cwd: root,
        env: cleanEnv({ DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1' }),
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      shell.stdout.on('data', (d: Buffer) => (out += d.toString()));
      shell.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const timer = setTimeout(() => shell.kill('SIGKILL'), 240_000);
      shell.once('exit', (c) => {
        clearTimeout(timer);
        resolve({ stdout: out, stderr: err, code: c });
      });
    });
    const results = resultsOf(stdout);
    runnable.forEach((c, i) => {
      const r = results.get(i);
      const where = `${c.section}: ${c.text}\n--- stderr:\n${stderr.slice(-2000)}`;
      expect(r, `never ran (an earlier line failed?) ${where}`).toBeDefined();
      expect(r!.rc, `${where}\n--- output:\n${r!.output}`).toBe(0);
      for (const e of c.expected) expect(r!.output.trim(), `${c.text}\nexpected: ${e}`).toMatch(answerPattern(e));
    });
    expect(code).toBe(0);
  }, 300_000);
});

describe('the README runner itself', () => {
  it('joins continuation lines, attaches `# {` answers to their command, and reads `…` as anything', () => {
    const body = '```sh\nA=$(curl -s x \\\n  -d y | jq -r .id)\n# {"id":"…","n":1}\n# not an answer\nnpm start   # [own terminal]\n```\n';
    expect(commandsOf('s', body)).toEqual([
      { section: 's', text: 'A=$(curl -s x -d y | jq -r .id)', expected: ['{"id":"…","n":1}'], ownTerminal: false },
      { section: 's', text: 'npm start   # [own terminal]', expected: [], ownTerminal: true },
    ]);
    expect('{"id":"abc","n":1}').toMatch(answerPattern('{"id":"…","n":1}'));
    expect('{"id":"abc","n":12}').not.toMatch(answerPattern('{"id":"…","n":1}'));
    expect('{"a":1,"b":2}').toMatch(answerPattern('{"a":1,…'));
    expect(sectionOf('x\n## A\none\n### B\ntwo\n### C\nthree\n## D\nfour\n', 'A', ['B'])).toBe('## A\none\n### C\nthree\n');
  });
});
