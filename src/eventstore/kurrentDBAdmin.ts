import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import type { KurrentDBConnection, KurrentDBNode } from './kurrentDBConnection.js';

/**
 * The node operations the client has no API for, on each node's HTTP endpoint (the same port as
 * gRPC): the server version (`/info`), the cluster's members (`/gossip`) and scavenges
 * (`/admin/scavenge`, `/admin/scavenge/last`). Credentials and TLS are the connection string's.
 */
export type HttpAnswer = { status: number; body: string };
export type HttpCall = (node: KurrentDBNode, method: 'GET' | 'POST', path: string) => Promise<HttpAnswer>;

/** Outcome of the last scavenge a node knows of (the server's own words). */
export type ScavengeResult = 'InProgress' | 'Success' | 'Stopped' | 'Errored' | 'Unknown';

const TIMEOUT_MS = 10_000;
/** Admin answers are a few KiB; anything longer is not what was asked. */
const MAX_BODY = 1024 * 1024;
/** Members that hold a copy of the log (a manager or a node shutting down does not). */
const SERVING = new Set(['leader', 'follower', 'readonlyreplica', 'prereadonlyreplica', 'catchingup', 'clone', 'preleader', 'prereplica']);

export class KurrentDBAdmin {
  private agent: Agent | null = null;

  constructor(
    private readonly connection: KurrentDBConnection,
    private readonly call: HttpCall = (node, method, path) => this.send(node, method, path),
  ) {}

  /** The server's version (`26.0.3`), from the first node that answers; null when none does. */
  async serverVersion(): Promise<string | null> {
    for (const node of this.connection.nodes) {
      try {
        const answer = await this.call(node, 'GET', '/info');
        if (answer.status !== 200) continue;
        const info = JSON.parse(answer.body) as { dbVersion?: unknown; esVersion?: unknown };
        const version = info.dbVersion ?? info.esVersion;
        if (typeof version === 'string') return version;
      } catch {
        // The next node may answer.
      }
    }
    return null;
  }

  /**
   * Every node holding a copy of the log, as the cluster's gossip lists them (a scavenge runs
   * per node); the connection string's nodes when no node answers gossip.
   */
  async members(): Promise<KurrentDBNode[]> {
    for (const node of this.connection.nodes) {
      try {
        const answer = await this.call(node, 'GET', '/gossip');
        if (answer.status !== 200) continue;
        const members = (JSON.parse(answer.body) as { members?: unknown }).members;
        if (!Array.isArray(members)) continue;
        const out = new Map<string, KurrentDBNode>();
        for (const m of members as Record<string, unknown>[]) {
          if (m.isAlive !== true) continue;
          if (typeof m.state === 'string' && !SERVING.has(m.state.toLowerCase())) continue;
          const host = nonEmpty(m.advertiseHostToClientAs) ?? nonEmpty(m.httpEndPointIp);
          const port = positive(m.advertiseHttpPortToClientAs) ?? positive(m.httpEndPointPort);
          if (host && port) out.set(`${host}:${port}`, { host, port });
        }
        if (out.size > 0) return [...out.values()];
      } catch {
        // The next node may answer.
      }
    }
    return [...this.connection.nodes];
  }

  /** Starts a scavenge on one node: its id, or `running` when the node is scavenging already. */
  async startScavenge(node: KurrentDBNode): Promise<{ id: string } | 'running'> {
    const answer = await this.call(node, 'POST', '/admin/scavenge');
    if (answer.status === 200) {
      const id = (JSON.parse(answer.body) as { scavengeId?: unknown }).scavengeId;
      if (typeof id === 'string' && id) return { id };
    }
    // The server answers 400 with a reason when a scavenge is already in progress.
    if (answer.status === 400 && /progress|running|already/i.test(answer.body)) return 'running';
    throw new ScavengeError(node, `POST /admin/scavenge answered ${answer.status}${answer.status === 401 || answer.status === 403 ? ' (the user must be in $ops or $admins)' : ''}`);
  }

  /** The last scavenge a node ran or runs (since it started). */
  async lastScavenge(node: KurrentDBNode): Promise<{ id: string | null; result: ScavengeResult }> {
    const answer = await this.call(node, 'GET', '/admin/scavenge/last');
    if (answer.status !== 200) throw new ScavengeError(node, `GET /admin/scavenge/last answered ${answer.status}`);
    const last = JSON.parse(answer.body) as { scavengeId?: unknown; scavengeResult?: unknown };
    const result = typeof last.scavengeResult === 'string' ? last.scavengeResult : 'Unknown';
    return {
      id: typeof last.scavengeId === 'string' ? last.scavengeId : null,
      result: (['InProgress', 'Success', 'Stopped', 'Errored'].includes(result) ? result : 'Unknown') as ScavengeResult,
    };
  }

  async close(): Promise<void> {
    const agent = this.agent;
    this.agent = null;
    await agent?.close();
  }

  private async send(node: KurrentDBNode, method: 'GET' | 'POST', path: string): Promise<HttpAnswer> {
    const { tls, credentials } = this.connection;
    const host = node.host.includes(':') ? `[${node.host}]` : node.host;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (credentials) headers.authorization = `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}`;
    const res = await request(`${tls ? 'https' : 'http'}://${host}:${node.port}${path}`, {
      method,
      headers,
      ...(method === 'POST' ? { body: '' } : {}),
      dispatcher: this.dispatcher(),
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
    let body = '';
    for await (const chunk of res.body) {
      body += chunk.toString();
      if (body.length > MAX_BODY) {
        res.body.destroy();
        throw new Error(`${method} ${path}: answer over ${MAX_BODY} bytes`);
      }
    }
    return { status: res.statusCode, body };
  }

  private dispatcher(): Agent {
    if (!this.agent) {
      const { tlsCAFile, tlsVerifyCert } = this.connection;
      this.agent = new Agent({
        connect: { ...(tlsCAFile ? { ca: readFileSync(tlsCAFile) } : {}), rejectUnauthorized: tlsVerifyCert, timeout: TIMEOUT_MS },
      });
    }
    return this.agent;
  }
}

export class ScavengeError extends Error {
  constructor(node: KurrentDBNode, reason: string) {
    super(`scavenge on KurrentDB node ${node.host}:${node.port}: ${reason}`);
    this.name = 'ScavengeError';
  }
}

function nonEmpty(v: unknown): string | null {
  return typeof v === 'string' && v.length > 0 ? v : null;
}

function positive(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null;
}
