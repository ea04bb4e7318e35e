import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

/**
 * docker-compose.yml checked as far as possible without a Docker engine (`docker compose config`
 * needs the Compose plugin): the profiles start what docs/scaling.md and the README say, every
 * dependency and mounted file exists, and every service process of the cluster reaches all
 * nodes and members.
 */
type Service = {
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
  it('every service belongs to a profile: single is one of each, cluster is three EventStoreDB nodes, three MongoDB members, their init job, two service processes and a load balancer', () => {
    expect(Object.values(compose.services).every((s) => (s.profiles ?? []).length === 1)).toBe(true);
    expect(inProfile('single')).toEqual(['eventstore', 'mongodb', 'wellstream']);
    expect(inProfile('cluster')).toEqual(['es1', 'es2', 'es3', 'loadbalancer', 'mongo-init', 'mongo1', 'mongo2', 'mongo3', 'wellstream-a', 'wellstream-b']);
  });

  it('dependencies stay inside their profile and mounted files exist', () => {
    for (const [name, s] of Object.entries(compose.services)) {
      const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
      for (const d of deps) expect(compose.services[d]?.profiles, `${name} -> ${d}`).toEqual(s.profiles);
      for (const v of s.volumes ?? []) if (v.startsWith('./')) expect(existsSync(join(root, v.split(':')[0]!)), v).toBe(true);
    }
  });

  it('both service processes reach every EventStoreDB node and replica set member, with the same keys from .env', () => {
    for (const name of ['wellstream-a', 'wellstream-b']) {
      const env = compose.services[name]!.environment!;
      expect(env.EVENTSTORE_URL).toMatch(/^esdb:\/\/es1:2113,es2:2113,es3:2113\?/);
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
