/**
 * `npm run bench -- api`: requests/s and p99 latency of GET /v1/users/{id} and POST /v1/users
 * under 32 concurrent connections (autocannon), against the real server started as `npm start`
 * does, next to a bare fastify route answering the same JSON from memory on the same machine in
 * the same run (the framework's ceiling for this work), and a bare node:http server in its own
 * process answering the same bytes (the platform's ceiling, issue 27's reference). The service
 * logs at warn unless `--log-level=` says otherwise (`npm start` logs at info: a line per request).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import { cpuMsOf, freePort, json, machine, startService } from './support/service.js';

type Result = { name: string; rps: number; p50: number; p99: number; errors: number; non2xx: number; cpuUsPerRequest: number | null };

/** `pid`: the serving process, whose CPU time per answered request is reported (steadier than req/s on a shared machine). */
async function cannon(name: string, opts: autocannon.Options, pid?: number): Promise<Result> {
  const cpu0 = pid === undefined ? null : cpuMsOf(pid);
  const r = await autocannon({ connections: 32, duration: 10, ...opts });
  const cpu1 = pid === undefined ? null : cpuMsOf(pid);
  const answered = r.requests.total;
  const cpuUsPerRequest = cpu0 !== null && cpu1 !== null && answered > 0 ? ((cpu1 - cpu0) * 1000) / answered : null;
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.errors, non2xx: r.non2xx, cpuUsPerRequest };
}

export default async function main(args: string[]) {
  const seconds = Number(args.find((a) => a.startsWith('--seconds='))?.split('=')[1] ?? 10);
  // --log-level=info: the service logs as `npm start` does by default (a line per request and per answer).
  const logLevel = args.find((a) => a.startsWith('--log-level='))?.split('=')[1];
  const dir = mkdtempSync(join(tmpdir(), 'wellstream-bench-api-'));
  const svc = await startService(dir, logLevel ? { LOG_LEVEL: logLevel } : {});
  try {
    const tenant = await json<{ api_key: string }>(
      await fetch(`${svc.base}/v1/admin/tenants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${svc.adminKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench' }),
      }),
    );
    const auth = { authorization: `Bearer ${tenant.api_key}` };
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) {
      const u = await json<{ id: string }>(
        await fetch(`${svc.base}/v1/users`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ external_ref: `seed-${i}` }) }),
      );
      ids.push(u.id);
    }
    const sample = await (await fetch(`${svc.base}/v1/users/${ids[0]}`, { headers: auth })).text();

    const bare = Fastify();
    bare.get('/v1/users/:id', async (_req, reply) => reply.type('application/json').send(sample));
    const barePort = await freePort();
    await bare.listen({ port: barePort, host: '127.0.0.1' });

    // Bare node:http in a process of its own, as the service is (autocannon runs in this one).
    const httpPort = await freePort();
    const bareHttp = spawn(process.execPath, ['-e', `require('node:http').createServer((q, s) => { s.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }); s.end(process.env.BODY); }).listen(${httpPort}, '127.0.0.1', () => console.log('up'))`], {
      env: { ...process.env, BODY: sample },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise((resolve) => bareHttp.stdout!.once('data', resolve));

    let n = 0;
    const results: Result[] = [];
    results.push(
      await cannon('GET /v1/users/{id} (service)', {
        url: svc.base,
        duration: seconds,
        requests: [{ method: 'GET', headers: auth, setupRequest: (req) => ({ ...req, path: `/v1/users/${ids[n++ % ids.length]}` }) }],
      }, svc.child.pid),
    );
    results.push(await cannon('GET same JSON (bare node:http, own process)', { url: `http://127.0.0.1:${httpPort}`, duration: seconds, requests: [{ method: 'GET', path: `/v1/users/${ids[0]}` }] }, bareHttp.pid));
    bareHttp.kill();
    results.push(await cannon('GET same JSON (bare fastify)', { url: `http://127.0.0.1:${barePort}`, duration: seconds, requests: [{ method: 'GET', path: `/v1/users/${ids[0]}` }] }));
    let m = 0;
    // --get-only: the two GET rows and their ratio (a profile of the GET route alone, or a quicker check).
    if (!args.includes('--get-only')) results.push(
      await cannon('POST /v1/users (service)', {
        url: svc.base,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            path: '/v1/users',
            headers: { ...auth, 'content-type': 'application/json' },
            setupRequest: (req) => ({ ...req, body: JSON.stringify({ external_ref: `bench-${process.pid}-${m++}` }) }),
          },
        ],
      }, svc.child.pid),
    );
    await bare.close();

    console.log(`machine: ${machine()}`);
    console.log(`32 connections, ${seconds} s each; the service's LOG_LEVEL: ${logLevel ?? 'warn'} (npm start's default is info: --log-level=info)\n`);
    console.log('| route | req/s | p50 ms | p99 ms | errors | non-2xx | server CPU µs / request |');
    console.log('|---|---:|---:|---:|---:|---:|---:|');
    const cpu = (r: Result) => (r.cpuUsPerRequest === null ? '–' : r.cpuUsPerRequest.toFixed(1));
    for (const r of results) console.log(`| ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.errors} | ${r.non2xx} | ${cpu(r)} |`);
    const [service, bareNode] = [results[0]!, results[1]!];
    console.log(`\nGET service / bare node:http: ${((service.rps / bareNode.rps) * 100).toFixed(0)} %; / bare fastify: ${((service.rps / results[2]!.rps) * 100).toFixed(0)} %`);
    // The same ratio from CPU time: what each server could answer on a core of its own, whatever the neighbours did.
    if (service.cpuUsPerRequest && bareNode.cpuUsPerRequest) console.log(`GET service / bare node:http by CPU time per request: ${((bareNode.cpuUsPerRequest / service.cpuUsPerRequest) * 100).toFixed(0)} %`);
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
