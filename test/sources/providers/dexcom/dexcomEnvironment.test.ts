import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../../src/config.js';

/** Contracts §14: DEXCOM_ENVIRONMENT sandbox or production (default), DEXCOM_BASE_URL wins over both. */
describe('DEXCOM_ENVIRONMENT (issue 22)', () => {
  const env = (e: Record<string, string>) => loadConfig(e as NodeJS.ProcessEnv).providers.dexcom!;
  it('production by default: Dexcom is called at its documented origin', () => {
    expect(env({}).baseUrl).toBeUndefined();
    expect(env({ DEXCOM_ENVIRONMENT: 'production' }).baseUrl).toBeUndefined();
  });
  it("sandbox: every Dexcom call goes to Dexcom's sandbox origin", () => {
    expect(env({ DEXCOM_ENVIRONMENT: 'sandbox' }).baseUrl).toBe('https://sandbox-api.dexcom.com');
  });
  it('DEXCOM_BASE_URL replaces the origin whatever the environment', () => {
    expect(env({ DEXCOM_ENVIRONMENT: 'sandbox', DEXCOM_BASE_URL: 'http://127.0.0.1:9200' }).baseUrl).toBe('http://127.0.0.1:9200');
  });
  it('any other value stops the start with the reason', () => {
    expect(() => loadConfig({ DEXCOM_ENVIRONMENT: 'staging' } as NodeJS.ProcessEnv)).toThrow(ConfigError);
    expect(() => loadConfig({ DEXCOM_ENVIRONMENT: 'staging' } as NodeJS.ProcessEnv)).toThrow(/sandbox/);
  });
});
