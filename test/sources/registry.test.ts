import { describe, expect, it } from 'vitest';
import { FILE_FORMATS } from '../../src/catalog/formats.js';
import { PROVIDER_KINDS } from '../../src/catalog/providerKinds.js';
import { CONNECTED_PROVIDERS } from '../../src/catalog/providers.js';
import { IMPORT_DECODER_LOADERS, loadEtlParser } from '../../src/sources/sourceLoaders.js';
import { connectorOf, deviceParsers, etlParsers, importDecoders, PROVIDER_DESCRIPTORS, PULL_CONNECTORS, PUSH_CONNECTORS } from '../../src/sources/registry.js';

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

  it('every file format of the catalog has a parser (device) or a decoder (import), and none has no row', () => {
    expect(Object.keys(deviceParsers).sort()).toEqual(FILE_FORMATS.filter((f) => f.kind === 'device').map((f) => f.slug).sort());
    for (const f of FILE_FORMATS.filter((f) => f.kind === 'device')) expect(etlParsers[f.slug]).toBe(deviceParsers[f.slug]);
    expect(Object.keys(importDecoders('/tmp')).sort()).toEqual(FILE_FORMATS.filter((f) => f.kind === 'import').map((f) => f.slug).sort());
  });

  it("an ETL thread that loads only its job's source (sourceLoaders.ts) runs the very parser the registry names for every slug, and decoders for the import slugs only", async () => {
    for (const [slug, parser] of Object.entries(etlParsers)) expect(await loadEtlParser(slug), slug).toBe(parser);
    expect(await loadEtlParser('no-such-source')).toBeNull();
    expect(Object.keys(IMPORT_DECODER_LOADERS)).toEqual(Object.keys(importDecoders('/tmp')));
    for (const slug of Object.keys(IMPORT_DECODER_LOADERS)) {
      expect(await loadEtlParser(slug), slug).toBeNull();
      expect((await IMPORT_DECODER_LOADERS[slug]!())('/tmp').constructor, slug).toBe(importDecoders('/tmp')[slug]!.constructor);
    }
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
      'apple-health': 'import',
      'health-connect': 'import',
      'fitbit-takeout': 'import',
      'samsung-health': 'import',
      'dexcom-clarity': 'import',
      fit: 'import',
    });
    expect(Object.keys(PROVIDER_KINDS)).toEqual(['oura', 'whoop', 'withings', 'polar', 'fitbit', 'strava', 'garmin', 'google', 'dexcom', 'device-a', 'device-b', 'device-c', 'apple-health', 'health-connect', 'fitbit-takeout', 'samsung-health', 'dexcom-clarity', 'fit']);
  });
});
