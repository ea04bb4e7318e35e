import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { blockColumns, bySampleStart, decodeBlock, encodeBlock, pushIsoJson } from '../../../../projections/records/sampleBlocks/sampleBlock.js';
import type { SampleDoc } from '../../../../projections/records/samplesProjection.js';
import { recordKey } from '../../../../projections/records/recordIds.js';
import { quantity } from '../../../server/records/pipelineFixtures.js';
import { PROV } from '../fixtures.js';
import { INGESTED_AT, TENANT, USER } from '../harness.js';


/** A stored sample row as the per-sample model held it: every field the samples projection writes. */
function row(i: number, o: Partial<SampleDoc> = {}): SampleDoc {
  const at = new Date(Date.parse('2026-11-01T08:00:00.000Z') + i * 5_000).toISOString();
  const { kind: _kind, ...fields } = quantity({ external_id: `hr-${i}`, type: 'heart_rate', value: 60 + i, unit: 'count/min', start_date: at, end_date: at, ...WATCH, metadata: { HKTimeZone: 'Europe/Berlin' }, ...PROV });
  return { ...fields, user_id: USER, tenant_id: TENANT, day: '2026-11-01', ingested_at: INGESTED_AT, quality: [], excluded: false, hidden: false, id: 10_000 + i, _id: recordKey(USER, 'device-a', `hr-${i}`), ...o };
}
const WATCH = { source_name: 'Apple Watch', source_bundle_id: 'com.apple.health.1A2B', device_model: 'Watch', product_type: 'Watch7,1' };

const roundTrip = (samples: SampleDoc[]) => decodeBlock(encodeBlock(samples));

describe('sample blocks: decodeBlock(encodeBlock(samples)) gives back every field of every sample (issue 38; the API answers stay byte-identical)', () => {
  it('keeps every field of uniform samples, in the order the rows had them', () => {
    const samples = Array.from({ length: 50 }, (_, i) => row(i));
    const back = roundTrip(samples);
    expect(back).toEqual(samples);
    expect(Object.keys(back[7]!)).toEqual(Object.keys(samples[7]!));
  });

  it('stores a field once when every sample holds its own equal copy of it (quality, metadata), and per sample when copies differ in a value, a key, its order, or nested', () => {
    const constantIn = (samples: SampleDoc[], field: string) => blockColumns(encodeBlock(samples)).constant(field);
    const copies = Array.from({ length: 20 }, (_, i) => row(i, { quality: ['implausible_value'], metadata: { HKTimeZone: 'Europe/Berlin', n: 1 } }));
    expect([constantIn(copies, 'quality'), constantIn(copies, 'metadata')]).toEqual([true, true]);
    expect(roundTrip(copies)).toEqual(copies);
    const variants: [string, unknown][] = [
      ['quality', ['implausible_value', 'future_date']],
      ['quality', []],
      ['metadata', { n: 1, HKTimeZone: 'Europe/Berlin' }],
      ['metadata', { HKTimeZone: 'Europe/Berlin', n: 2 }],
      ['metadata', { HKTimeZone: 'Europe/Berlin' }],
      ['metadata', { HKTimeZone: 'Europe/Berlin', n: 1, x: null }],
      ['metadata', ['Europe/Berlin', 1]],
    ];
    for (const [field, value] of variants) {
      const samples = copies.map((s, i) => (i === 7 ? { ...s, [field]: value } : s));
      expect(constantIn(samples, field), JSON.stringify(value)).toBe(false);
      expect(roundTrip(samples)).toEqual(samples);
    }
    // Equal as JSON though not entry by entry: a key whose value is undefined is not written.
    const undefinedKey = copies.map((s, i) => (i === 3 ? { ...s, metadata: { HKTimeZone: 'Europe/Berlin', gone: undefined, n: 1 } } : s));
    expect(constantIn(undefinedKey, 'metadata')).toBe(true);
    // Nested copies equal as JSON.
    const nested = Array.from({ length: 5 }, (_, i) => row(i, { metadata: { tz: { name: 'UTC' } } }));
    expect(constantIn(nested, 'metadata')).toBe(true);
  });

  it('keeps fields that differ per sample: values exactly (fractions, negatives, large), booleans, nulls, metadata, quality, flags', () => {
    const samples = [
      row(0, { value: 0.1 + 0.2, metadata: {}, quality: ['implausible_value'], excluded: true }),
      row(1, { value: -1e-300, source_name: null, device: null, was_user_entered: true, hidden: true }),
      row(2, { value: 9_007_199_254_740_991, metadata: { HKTimeZone: 'UTC', original_value: 1.5, original_unit: 'kcal', nested: { a: [1, null, 'x'] } } }),
      row(3, { value: 1 / 3, end_date: '2026-11-01T09:00:00.123Z', product_type: null, body_worn: false, provider: 'device-b', source: 'garmin' }),
    ];
    expect(roundTrip(samples)).toEqual(samples);
  });

  it('keeps metadata objects of the same keys, packed by key: key order, nulls, nested values and the values of each sample; and writes each key once per block', () => {
    const samples = Array.from({ length: 40 }, (_, i) =>
      row(i, { metadata: { HKTimeZone: 'Europe/Berlin', timezone: i % 7 ? 'Europe/Berlin' : null, original_value: 50 + (i % 9) / 4, original_unit: 'count/min', nested: { a: [i, null] } } }),
    );
    const data = encodeBlock(samples);
    const back = decodeBlock(data);
    expect(back).toEqual(samples);
    for (const j of [0, 7, 39]) expect(Object.keys(back[j]!.metadata as object)).toEqual(Object.keys(samples[j]!.metadata as object));
    // A key is named in the field's key list and again with its constant or its column, not once per sample.
    for (const k of ['original_unit', 'original_value', 'HKTimeZone']) expect(data.split(`"${k}"`).length - 1, k).toBe(2);
    const cols = blockColumns(data);
    expect(cols.field('metadata', 7)).toEqual(samples[7]!.metadata);
    const out: string[] = [];
    cols.writeJson('metadata', 8, out);
    expect(out.join('')).toBe(JSON.stringify(samples[8]!.metadata));
  });

  it('keeps metadata of different keys or key orders as it was (packed per sample then)', () => {
    const samples = [row(0, { metadata: { a: 1, b: 2 } }), row(1, { metadata: { b: 2, a: 1 } }), row(2, { metadata: { a: 1 } }), row(3, { metadata: { a: 1, b: 3 } })];
    const back = roundTrip(samples);
    expect(back).toEqual(samples);
    for (let j = 0; j < samples.length; j++) expect(Object.keys(back[j]!.metadata as object)).toEqual(Object.keys(samples[j]!.metadata as object));
    const proto = [row(0, { metadata: JSON.parse('{"__proto__": {"x": 1}, "k": 1}') }), row(1, { metadata: JSON.parse('{"__proto__": {"x": 2}, "k": 1}') })];
    expect(JSON.stringify(roundTrip(proto).map((s) => s.metadata))).toBe(JSON.stringify(proto.map((s) => s.metadata)));
  });

  it('keeps metadata keys that name an Object.prototype member (toString, constructor, valueOf) as sent, varying or constant (a provider names its keys)', () => {
    const samples = [0, 1, 2].map((i) => row(i, { metadata: { toString: `t${i}`, constructor: i, valueOf: 'same', hasOwnProperty: null } }));
    const back = roundTrip(samples);
    expect(back.map((s) => s.metadata)).toEqual(samples.map((s) => s.metadata));
    expect(JSON.stringify(back.map((s) => s.metadata))).toBe(JSON.stringify(samples.map((s) => s.metadata)));
  });

  it('keeps absent fields absent and null ones null (a row stored without quality reads back without it)', () => {
    const a = row(0);
    const b = row(1, { device_model: null });
    delete a.quality;
    delete (b as Partial<SampleDoc>).hidden;
    const back = roundTrip([a, b]);
    expect('quality' in back[0]!).toBe(false);
    expect(back[1]!.quality).toEqual([]);
    expect('hidden' in back[1]!).toBe(false);
    expect(back[0]!.hidden).toBe(false);
    expect(back[1]!.device_model).toBeNull();
    expect(back).toEqual([a, b]);
  });

  it('keeps start and end times that are not in toISOString form as written, and keys of any length', () => {
    const samples = [row(0, { start_date: '2026-11-01T08:00:00Z', end_date: '2026-11-01T08:00:01Z', _id: 'short' }), row(1)];
    const back = roundTrip(samples);
    expect(back).toEqual(samples);
  });

  it('keeps ids that are not in start order and intervals of any length, the samples sorted by (start_date, id)', () => {
    const samples = [row(0, { id: 50_007 }), row(0, { id: 20_001, external_id: 'x', _id: recordKey(USER, 'device-a', 'x'), end_date: '2026-11-02T08:00:00.000Z' }), row(5, { id: 10_001 })].sort(bySampleStart);
    expect(samples.map((s) => s.id)).toEqual([20_001, 50_007, 10_001]);
    expect(roundTrip(samples)).toEqual(samples);
  });

  it('gives every decoded sample its own top-level fields (a flag set on one leaves its neighbours alone)', () => {
    const back = roundTrip([row(0), row(1)]);
    back[0]!.hidden = true;
    expect(back[1]!.hidden).toBe(false);
  });

  it('writes times as toISOString does, across days, years and before 1970 (the times are stored as instants)', () => {
    const times = ['1969-12-31T23:59:59.999Z', '2024-02-29T23:59:59.999Z', '2026-03-29T01:00:00.000Z', '2000-01-01T00:00:00.007Z', '2026-11-01T08:00:00.070Z'];
    const samples = times.map((t, i) => row(i, { start_date: t, end_date: new Date(Date.parse(t) + 36 * 3_600_000 + 1).toISOString() })).sort(bySampleStart);
    expect(roundTrip(samples)).toEqual(samples);
    expect(encodeBlock(samples)).toContain('"s":[');
  });

  it('writes an instant\'s JSON (pushIsoJson, the page\'s start and end) as JSON.stringify of its toISOString, in any order of days, every minute, second and millisecond', () => {
    const at = [Date.parse('2026-03-29T00:00:00.000Z'), -1, 0, Date.parse('2024-02-29T23:59:59.999Z'), Date.parse('9999-12-31T23:59:59.999Z'), Date.parse('0000-01-01T00:00:00.000Z'), Date.parse('+010000-01-01T00:00:00.000Z')];
    for (let i = 0; i < 20_000; i++) at.push(Date.parse('2026-03-28T00:00:00Z') + Math.floor(((i * 7919) % 20_011) * 8_640.7) + (i % 3) * 86_400_000);
    for (const ms of at) {
      const out: string[] = [];
      pushIsoJson(ms, out);
      expect(out.join('')).toBe(JSON.stringify(new Date(ms).toISOString()));
    }
  });

  it('answers each sample column by column as its decoded doc has it (blockColumns, for readers that decode only what they answer)', () => {
    const a = row(0, { source_name: null });
    const b = row(1, { value: 1.25, hidden: true });
    delete a.quality;
    const data = encodeBlock([a, b]);
    const block = blockColumns(data);
    const docs = decodeBlock(data);
    expect(block.n).toBe(2);
    for (let j = 0; j < 2; j++) {
      expect(block.doc(j)).toEqual(docs[j]);
      expect([block.start(j), block.id(j), block.key(j)]).toEqual([docs[j]!.start_date, docs[j]!.id, docs[j]!._id]);
      for (const f of ['value', 'hidden', 'quality', 'source_name', 'end_date', 'metadata']) expect(block.field(f, j), f).toEqual((docs[j] as Record<string, unknown>)[f]);
      // Each field's JSON as JSON.stringify writes its value; nothing for a field the sample lacks.
      for (const f of ['value', 'hidden', 'quality', 'source_name', 'start_date', 'end_date', 'metadata', 'no_such_field']) {
        const out: string[] = [];
        const v = (docs[j] as Record<string, unknown>)[f];
        expect(block.writeJson(f, j, out), f).toBe(v !== undefined);
        expect(out.join(''), f).toBe(v === undefined ? '' : JSON.stringify(v));
      }
    }
    expect(block.field('quality', 0)).toBeUndefined();
    expect([block.constant('type'), block.constant('value'), block.constant('no_such_field'), block.constant('quality')]).toEqual([true, false, true, false]);
  });

  it('issue 38: keeps UUID external ids (HealthKit upper case, lower case) as written while storing their 16 bytes, and any other ids (mixed case, braces, short, absent, not strings) as they were', () => {
    const uuid = (i: number) => randomUUID().toUpperCase().replace(/^.{4}/, String(1000 + i).slice(-4));
    const upper = Array.from({ length: 300 }, (_, i) => row(i, { external_id: uuid(i) }));
    const data = encodeBlock(upper);
    expect(decodeBlock(data)).toEqual(upper);
    // 36 characters quoted a sample before; about 21 now.
    expect(data.length).toBeLessThan(encodeBlock(upper.map((d, i) => ({ ...d, external_id: `x${i}` }))).length + 300 * 22);
    for (const j of [0, 137, 299]) {
      const block = blockColumns(data);
      expect(block.field('external_id', j)).toBe(upper[j]!.external_id);
      const out: string[] = [];
      expect(block.writeJson('external_id', j, out)).toBe(true);
      expect(out.join('')).toBe(JSON.stringify(upper[j]!.external_id));
      expect(block.constant('external_id')).toBe(false);
    }
    const lower = upper.map((d) => ({ ...d, external_id: d.external_id.toLowerCase() }));
    expect(decodeBlock(encodeBlock(lower))).toEqual(lower);
    const others: [string, (d: SampleDoc, i: number) => unknown][] = [
      ['one in mixed case', (d, i) => (i === 5 ? d.external_id.slice(0, 30) + d.external_id.slice(30).toLowerCase() : d.external_id)],
      ['upper and lower case in one block', (d, i) => (i % 2 ? d.external_id.toLowerCase() : d.external_id)],
      ['braces', (d, i) => (i === 9 ? `{${d.external_id}}` : d.external_id)],
      ['without dashes', (d, i) => (i === 3 ? d.external_id.replaceAll('-', '') : d.external_id)],
      ['a short one', (d, i) => (i === 0 ? 'hr-0' : d.external_id)],
      ['a number', (d, i) => (i === 2 ? 42 : d.external_id)],
      ['a null', (d, i) => (i === 7 ? null : d.external_id)],
    ];
    for (const [name, id] of others) {
      const samples = upper.map((d, i) => ({ ...d, external_id: id(d, i) }) as SampleDoc);
      expect(decodeBlock(encodeBlock(samples)), name).toEqual(samples);
    }
    const missing = upper.map((d, i) => {
      const c = { ...d } as Partial<SampleDoc>;
      if (i === 4) delete c.external_id;
      return c as SampleDoc;
    });
    expect(decodeBlock(encodeBlock(missing))).toEqual(missing);
    expect(Object.keys(decodeBlock(encodeBlock(upper))[3]!)).toEqual(Object.keys(upper[3]!));
  });

  it('issue 38: a block of instants stores no end lengths, and one with any interval stores them all; both read back exactly, blocks written with lengths of 0 too', () => {
    const instants = Array.from({ length: 30 }, (_, i) => row(i));
    const data = encodeBlock(instants);
    expect(JSON.parse(data).e).toBeUndefined();
    expect(decodeBlock(data)).toEqual(instants);
    const block = blockColumns(data);
    const out: string[] = [];
    block.writeJson('end_date', 4, out);
    expect(out.join('')).toBe(JSON.stringify(instants[4]!.end_date));
    const mixed = instants.map((d, i) => (i === 17 ? { ...d, end_date: new Date(Date.parse(d.start_date) + 1000).toISOString() } : d));
    expect(JSON.parse(encodeBlock(mixed)).e).toHaveLength(30);
    expect(decodeBlock(encodeBlock(mixed))).toEqual(mixed);
    const earlier = JSON.parse(data) as Record<string, unknown>;
    earlier.e = instants.map(() => 0);
    expect(decodeBlock(JSON.stringify(earlier))).toEqual(instants);
  });

  it('issue 38: decodes a block written before UUIDs were packed (external ids in `f`) as it was written', () => {
    const uuids = Array.from({ length: 20 }, () => randomUUID().toUpperCase());
    const samples = uuids.map((u, i) => row(i, { external_id: u }));
    const packed = JSON.parse(encodeBlock(samples)) as { o: string[]; x?: string; U?: number; f: Record<string, unknown[]> };
    const { x: _x, U: _u, ...earlier } = packed;
    earlier.f.external_id = uuids;
    expect(decodeBlock(JSON.stringify(earlier))).toEqual(samples);
  });

  it('packs a block of uniform samples into far fewer bytes than their rows as JSON', () => {
    const samples = Array.from({ length: 1000 }, (_, i) => row(i, { value: 50 + (i % 40) }));
    const packed = encodeBlock(samples).length;
    expect(packed).toBeLessThan(JSON.stringify(samples).length / 5);
  });
});
