import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { KURRENTDB_IMAGE } from '../support/globalSetup.js';

/**
 * docker-compose.yml checked as far as possible without a Docker engine (`docker compose config`
 * needs the Compose plugin): the profiles start what docs/scaling.md and the README say, every
 * dependency and mounted file exists, and every service process of the cluster reaches all
 * nodes and members.
 */
type Service = {
  image?: string;
  profiles?: string[];
  depends_on?: Record<string, unknown> | string[];
  volumes?: string[];
  environment?: Record<string, string>;
  ports?: string[];
};
const root = join(import.meta.dirname, '..', '..');
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const inProfile = (p: string) => Object.entries(compose.services).filter(([, s]) => s.profiles?.includes(p)).map(([n]) => n).sort();

describe('docker-compose.yml', () => {
  it('every service belongs to a profile: single is one of each, cluster is three KurrentDB nodes, three MongoDB members, their init job, two service processes and a load balancer', () => {
    expect(Object.values(compose.services).every((s) => (s.profiles ?? []).length === 1)).toBe(true);
    expect(inProfile('single')).toEqual(['kurrentdb', 'mongodb', 'wellstream']);
    expect(inProfile('cluster')).toEqual(['kurrentdb1', 'kurrentdb2', 'kurrentdb3', 'loadbalancer', 'mongo-init', 'mongo1', 'mongo2', 'mongo3', 'wellstream-a', 'wellstream-b']);
  });

  it('runs KurrentDB 26.0 LTS with its own option names, the image CI and the test set-up run (issue 25, contracts §16)', () => {
    const nodes = ['kurrentdb', 'kurrentdb1', 'kurrentdb2', 'kurrentdb3'].map((n) => compose.services[n]!);
    expect(KURRENTDB_IMAGE).toMatch(/^docker\.kurrent\.io\/kurrent-lts\/kurrentdb:26\.0(\.\d+)?$/);
    for (const node of nodes) {
      expect(node.image).toBe(KURRENTDB_IMAGE);
      expect(Object.keys(node.environment ?? {}).filter((k) => !k.startsWith('KURRENTDB_'))).toEqual([]);
      expect(node.environment!.KURRENTDB_INSECURE).toBe('true');
      expect((node.volumes ?? []).some((v) => v.endsWith(':/var/lib/kurrentdb'))).toBe(true);
    }
    expect(nodes.slice(1).every((n) => n.environment!.KURRENTDB_CLUSTER_SIZE === '3' && n.environment!.KURRENTDB_GOSSIP_SEED)).toBe(true);
    const ci = parse(readFileSync(join(root, '.github/workflows/ci.yml'), 'utf8')) as { jobs: Record<string, { services?: Record<string, Service & { env?: Record<string, string> }>; env?: Record<string, string> }> };
    const backends = ci.jobs['production-backends']!;
    expect(backends.services!.kurrentdb!.image).toBe(KURRENTDB_IMAGE);
    expect(Object.keys(backends.services!.kurrentdb!.env!).filter((k) => !k.startsWith('KURRENTDB_'))).toEqual([]);
    expect(backends.env!.EVENTSTORE_URL).toMatch(/^kurrentdb:\/\/localhost:2113\?/);
    expect(compose.services.wellstream!.environment!.EVENTSTORE_URL).toMatch(/^kurrentdb:\/\/kurrentdb:2113\?/);
  });

  it('dependencies stay inside their profile and mounted files exist', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
      for (const d of deps) expect(compose.services[d]?.profiles, `${name} -> ${d}`).toEqual(s.profiles);
      for (const v of s.volumes ?? []) if (v.startsWith('./')) expect(existsSync(join(root, v.split(':')[0]!)), v).toBe(true);
    }
  });

  it('both service processes reach every KurrentDB node and replica set member, with the same keys from .env', () => {
    for (const name of ['wellstream-a', 'wellstream-b']) {
      const env = compose.services[name]!.environment!;
      expect(env.EVENTSTORE_URL).toMatch(/^kurrentdb:\/\/kurrentdb1:2113,kurrentdb2:2113,kurrentdb3:2113\?/);
      expect(env.MONGODB_URL).toBe('mongodb://mongo1:27017,mongo2:27017,mongo3:27017/?replicaSet=rs0');
      expect(env.SEALING_KEY).toMatch(/^\$\{SEALING_KEY:\?/);
      expect(env.ADMIN_API_KEY).toMatch(/^\$\{ADMIN_API_KEY:\?/);
    }
    const nginx = readFileSync(join(root, 'deploy/cluster/nginx.conf'), 'utf8');
    expect(nginx).toContain('server wellstream-a:8080');
    expect(nginx).toContain('server wellstream-b:8080');
  });

  it('nginx passes the Host the client sent, port included, and the service processes trust forwarded headers from the load balancer alone (issue 20)', () => {
    const nginx = readFileSync(join(root, 'deploy/cluster/nginx.conf'), 'utf8');
    expect(nginx).toMatch(/proxy_set_header Host \$http_host;/);
    expect(nginx).not.toMatch(/proxy_set_header Host \$host;/);
    const balancer = (compose.services.loadbalancer as Service & { networks: Record<string, { ipv4_address: string }> }).networks.cluster!.ipv4_address;
    for (const name of ['wellstream-a', 'wellstream-b']) {
      const env = compose.services[name]!.environment!;
      expect(env.TRUST_PROXY).toBe(balancer);
      expect(env.PUBLIC_BASE_URL).toMatch(/^\$\{PUBLIC_BASE_URL:-http:\/\/localhost:8080\}$/);
    }
  });
});
