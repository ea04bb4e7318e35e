/**
 * KurrentDB connection strings (`EVENTSTORE_URL`), read once for two uses: the client gets the
 * string with its scheme normalised, and the admin calls the client has no API for (scavenges,
 * node information, cluster members) get the nodes, credentials and TLS settings it names.
 *
 *   kurrentdb://[user:password@]host[:port][,host[:port]...][?key=value&...]
 *   kurrentdb+discover://...   one host name whose DNS answers list the cluster's nodes
 *
 * `esdb://` (EventStoreDB's name for the same thing) is accepted and means exactly
 * `kurrentdb://`; so are the client's shorter `kurrent://` and `kdb://`.
 */
export type KurrentDBNode = { host: string; port: number };

export type KurrentDBConnection = {
  /** The string handed to the client: `kurrentdb://` or `kurrentdb+discover://`, the rest unchanged. */
  clientConnectionString: string;
  nodes: KurrentDBNode[];
  discover: boolean;
  credentials: { username: string; password: string } | null;
  tls: boolean;
  /** False only when the string says `tlsVerifyCert=false`. */
  tlsVerifyCert: boolean;
  tlsCAFile: string | null;
};

const SCHEMES: Record<string, { discover: boolean }> = {
  kurrentdb: { discover: false },
  kurrent: { discover: false },
  kdb: { discover: false },
  esdb: { discover: false },
  'kurrentdb+discover': { discover: true },
  'kurrent+discover': { discover: true },
  'kdb+discover': { discover: true },
  'esdb+discover': { discover: true },
};
const DEFAULT_PORT = 2113;

export class ConnectionStringError extends Error {
  constructor(reason: string) {
    // Never echoes the string itself: it may hold a password.
    super(`EVENTSTORE_URL is not a KurrentDB connection string (kurrentdb://host:2113 or esdb://host:2113): ${reason}`);
    this.name = 'ConnectionStringError';
  }
}

export function parseConnectionString(connectionString: string): KurrentDBConnection {
  const s = connectionString.trim();
  const m = /^([a-z+]+):\/\/(.*)$/i.exec(s);
  if (!m) throw new ConnectionStringError('no scheme');
  const scheme = m[1]!.toLowerCase();
  const kind = SCHEMES[scheme];
  if (!kind) throw new ConnectionStringError(`unknown scheme "${scheme}"`);
  let rest = m[2]!;
  const q = rest.indexOf('?');
  const query = q >= 0 ? rest.slice(q + 1) : '';
  rest = (q >= 0 ? rest.slice(0, q) : rest).replace(/\/+$/, '');
  let credentials: KurrentDBConnection['credentials'] = null;
  const at = rest.lastIndexOf('@');
  if (at >= 0) {
    const userInfo = rest.slice(0, at);
    const colon = userInfo.indexOf(':');
    if (colon <= 0) throw new ConnectionStringError('credentials must be user:password');
    credentials = { username: decodeURIComponent(userInfo.slice(0, colon)), password: decodeURIComponent(userInfo.slice(colon + 1)) };
    rest = rest.slice(at + 1);
  }
  const nodes = rest.split(',').map((part) => parseNode(part.trim()));
  if (nodes.length === 0) throw new ConnectionStringError('no host');
  const params = new Map<string, string>();
  for (const pair of query.split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new ConnectionStringError('options must be key=value');
    params.set(pair.slice(0, eq).toLowerCase(), decodeURIComponent(pair.slice(eq + 1)));
  }
  const canonical = kind.discover ? 'kurrentdb+discover' : 'kurrentdb';
  return {
    clientConnectionString: `${canonical}://${s.slice(m[1]!.length + 3)}`,
    nodes,
    discover: kind.discover,
    credentials,
    tls: !isFalse(params.get('tls')),
    tlsVerifyCert: !isFalse(params.get('tlsverifycert')),
    tlsCAFile: params.get('tlscafile') ?? null,
  };
}

function parseNode(part: string): KurrentDBNode {
  if (!part) throw new ConnectionStringError('empty host');
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(part);
  const [host, port] = bracketed ? [bracketed[1]!, bracketed[2]] : part.split(':', 2);
  if (!host || /[\s/@]/.test(host)) throw new ConnectionStringError('bad host');
  const n = port === undefined ? DEFAULT_PORT : Number(port);
  if (!Number.isInteger(n) || n <= 0 || n > 65535) throw new ConnectionStringError('bad port');
  return { host, port: n };
}

function isFalse(v: string | undefined): boolean {
  return v !== undefined && v.toLowerCase() === 'false';
}
