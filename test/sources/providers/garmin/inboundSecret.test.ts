import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../src/config.js';
import { garmin } from '../../../../src/sources/providers/garmin/provider.js';

/**
 * The inbound address's secret (docs/connectors/garmin.md "Registering the inbound address"):
 * Garmin does not sign pushes, so the secret must be long enough to be unguessable and fit in a
 * URL path segment, whether the instance's (GARMIN_INBOUND_SECRET) or a tenant's (INBOUND_SECRET key).
 */
describe('Garmin inbound secret', () => {
  it('GARMIN_INBOUND_SECRET is read for the push provider only and refused when short or not URL-safe', () => {
    const ok = loadConfig({ GARMIN_INBOUND_SECRET: 'a'.repeat(24), OURA_INBOUND_SECRET: 'b'.repeat(24) } as NodeJS.ProcessEnv);
    expect(ok.providers.garmin!.inboundSecret).toBe('a'.repeat(24));
    expect(ok.providers.oura!.inboundSecret).toBeUndefined();
    expect(() => loadConfig({ GARMIN_INBOUND_SECRET: 'short' } as NodeJS.ProcessEnv)).toThrow(ConfigError);
    expect(() => loadConfig({ GARMIN_INBOUND_SECRET: `${'a'.repeat(24)}/x` } as NodeJS.ProcessEnv)).toThrow(ConfigError);
  });

  it("a tenant's INBOUND_SECRET key is optional, secret, and follows the same rule", () => {
    const keys = { CLIENT_ID: 'garmin-client', CLIENT_SECRET: 'garmin-secret' };
    expect(garmin.keys.find((k) => k.name === 'INBOUND_SECRET')).toEqual({ name: 'INBOUND_SECRET', required: false, secret: true });
    expect(garmin.validateKeys(keys)).toBeNull();
    expect(garmin.validateKeys({ ...keys, INBOUND_SECRET: 'x'.repeat(30) })).toBeNull();
    expect(garmin.validateKeys({ ...keys, INBOUND_SECRET: 'too-short' })).toMatch(/INBOUND_SECRET/);
  });
});
