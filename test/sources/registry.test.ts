import { describe, expect, it } from 'vitest';
import { FILE_FORMATS } from '../../src/catalog/formats.js';
import { PROVIDER_KINDS } from '../../src/catalog/providerKinds.js';
import { CONNECTED_PROVIDERS } from '../../src/catalog/providers.js';
import { connectorOf, deviceParsers, etlParsers, PROVIDER_DESCRIPTORS, PULL_CONNECTORS, PUSH_CONNECTORS } from '../../src/sources/registry.js';

describe('the source registry and the source catalog name the same sources (issue 24: a source is one folder, one catalog row, one registration line)', () => {
  it('every catalog provider has one connector of its kind, whose descriptor is its catalog row with endpoints', () => {
    for (const p of CONNECTED_PROVIDERS) {
      const c = connectorOf(p.slug);
      expect(c, p.slug).not.toBeNull();
      expect(p.kind === 'push' ? PUSH_CONNECTORS[p.slug] : PULL_CONNECTORS[p.slug]).toBe(c);
      const { oauth, ...facts } = c!.descriptor;
      const { oauth: rowOauth, ...row } = p;
      expect(facts).toEqual(row);
      expect(oauth).toMatchObject(rowOauth);
    }
    expect([...Object.keys(PULL_CONNECTORS), ...Object.keys(PUSH_CONNECTORS)].sort()).toEqual(CONNECTED_PROVIDERS.map((p) => p.slug).sort());
    expect(PROVIDER_DESCRIPTORS.map((d) => d.slug)).toEqual(CONNECTED_PROVIDERS.map((p) => p.slug));
  });

  it('every file format of the catalog has a parser, and no parser has no row', () => {
    expect(Object.keys(deviceParsers).sort()).toEqual(FILE_FORMATS.map((f) => f.slug).sort());
    for (const f of FILE_FORMATS) expect(etlParsers[f.slug]).toBe(deviceParsers[f.slug]);
  });

  it('contracts §7: every slug with its kind, providers first in listing order, then the device formats', () => {
    expect(PROVIDER_KINDS).toEqual({
      oura: 'oauth',
      whoop: 'oauth',
      withings: 'oauth',
      polar: 'oauth',
      fitbit: 'oauth',
      strava: 'oauth',
      garmin: 'push',
      google: 'oauth',
      dexcom: 'oauth',
      'device-a': 'device',
      'device-b': 'device',
      'device-c': 'device',
    });
    expect(Object.keys(PROVIDER_KINDS)).toEqual(['oura', 'whoop', 'withings', 'polar', 'fitbit', 'strava', 'garmin', 'google', 'dexcom', 'device-a', 'device-b', 'device-c']);
  });
});
