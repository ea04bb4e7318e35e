import { describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { MAX_DEPTH, MAX_KEPT_CHARS, MAX_TAG_CHARS, readTopLevelElements } from '../../../../src/sources/files/apple-health/exportXmlReader.js';
import { DAMAGED_DOCTYPE, DOCTYPE, decode, exportXml, ofKind } from './exportFixtures.js';

/** Contracts §13: "a damaged document type declaration or stray control characters do not stop the import"; issue 21 (malformed input, deterministic ids). */

const rec = (start: string, v: number, source = 'Test Phone') =>
  ` <Record type="HKQuantityTypeIdentifierStepCount" sourceName="${source}" unit="count" startDate="${start}" endDate="${start.replace(':00 ', ':59 ')}" value="${v}"/>`;
const BODY = [rec('2024-01-01 08:00:00 +0100', 10), rec('2024-01-01 08:01:00 +0100', 20), ` <Record type="HKQuantityTypeIdentifierNope" sourceName="X" unit="count" startDate="2024-01-01 08:00:00 +0100" endDate="2024-01-01 08:00:00 +0100" value="1"/>`].join('\n');

describe('apple-health: the document (contracts §13)', () => {
  it('reads the same records with no declaration, the iOS 16+ one, a damaged one, and a BOM, with lines numbered as in the file', async () => {
    const variants = [exportXml(BODY, { doctype: null }), exportXml(BODY, { doctype: DOCTYPE }), exportXml(BODY, { doctype: DAMAGED_DOCTYPE }), exportXml(BODY, { bom: true })];
    const results = await Promise.all(variants.map((v) => decode(v)));
    for (const [i, r] of results.entries()) {
      expect(r.records.map((x) => [x.external_id, (x as { value: number }).value])).toEqual(results[0]!.records.map((x) => [x.external_id, (x as { value: number }).value]));
      const xml = variants[i]!;
      expect(r.rejected.map((x) => x.location)).toEqual([`export.xml:${xml.slice(0, xml.indexOf('Nope')).split('\n').length}`]);
    }
  });

  it('drops characters XML forbids (C0 controls, U+FFFE) wherever they stand', async () => {
    const body = [
      ` <Record type="HKQuantityTypeIdentifierStepCount" sourceName="Ste\u0001ps\u001f App" unit="count" startDate="2024-01-01 08:00:00 +0100" endDate="2024-01-01 08:10:00 +0100" value="12">\n  <MetadataEntry key="note" value="a\u0000b\uFFFEc"/>\n </Record>`,
      `\u000b${rec('2024-01-01 09:00:00 +0100', 5)}`,
    ].join('\n');
    const { records, rejected } = await decode(exportXml(body));
    expect(rejected).toEqual([]);
    const q = ofKind(records, 'quantity');
    expect(q.map((r) => r.value)).toEqual([12, 5]);
    expect(q[0]!.source_name).toBe('Steps App');
    expect(q[0]!.metadata.note).toBe('abc');
  });

  it('a document cut short keeps every complete element and rejects the cut one, naming its line', async () => {
    const withMeta = ` <Record type="HKQuantityTypeIdentifierStepCount" sourceName="P" unit="count" startDate="2024-01-01 08:02:00 +0100" endDate="2024-01-01 08:02:59 +0100" value="30">\n  <MetadataEntry key="a" value="b"/>\n  <MetadataEntry key="c" value="d"/>\n </Record>`;
    const full = exportXml([rec('2024-01-01 08:00:00 +0100', 10), rec('2024-01-01 08:01:00 +0100', 20), withMeta].join('\n'));
    const insideElement = full.slice(0, full.indexOf('key="c"'));
    const a = await decode(insideElement);
    expect(ofKind(a.records, 'quantity').map((r) => r.value)).toEqual([10, 20]);
    expect(a.rejected.map((r) => [r.location, r.reason])).toEqual([[`export.xml:${full.slice(0, full.indexOf('value="30"')).split('\n').length}`, 'the document ends inside <Record> (the file is cut short)']]);
    const insideTag = full.slice(0, full.indexOf('value="30"'));
    const b = await decode(insideTag);
    expect(ofKind(b.records, 'quantity').map((r) => r.value)).toEqual([10, 20]);
    expect(b.rejected.map((r) => [r.location, r.reason])).toEqual([[`export.xml:${insideTag.split('\n').length}`, 'the document ends inside a tag (the file is cut short)']]);
  });

  it('a document cut between elements says it may be cut short', async () => {
    const full = exportXml(rec('2024-01-01 08:00:00 +0100', 10));
    const { records, rejected } = await decode(full.slice(0, full.indexOf('</HealthData>')));
    expect(records).toHaveLength(1);
    expect(rejected.map((r) => r.reason)).toEqual(['the document ends before </HealthData> (the file may be cut short)']);
  });

  it('damage the XML parser cannot step over is rejected where it stands, and the rest is said to be unread', async () => {
    const xml = exportXml([rec('2024-01-01 08:00:00 +0100', 10), ' <<Record &&& </Nope>', rec('2024-01-01 08:02:00 +0100', 30)].join('\n'));
    const { records, rejected } = await decode(xml);
    expect(ofKind(records, 'quantity').map((r) => r.value)).toEqual([10]);
    const line = xml.slice(0, xml.indexOf('<<Record')).split('\n').length;
    expect(rejected[0]).toMatchObject({ location: `export.xml:${line}`, reason: 'not well-formed XML: disallowed character in tag name' });
    expect(rejected[rejected.length - 1]!.reason).toBe('nothing after the damage reported above could be read');
  });

  it(`a tag longer than ${MAX_TAG_CHARS} characters stops the reading with a reason instead of filling memory`, async () => {
    const huge = ` <Record type="HKQuantityTypeIdentifierStepCount" sourceName="${'x'.repeat(MAX_TAG_CHARS + 10)}" unit="count" value="1"/>`;
    const { records, rejected } = await decode(exportXml([rec('2024-01-01 08:00:00 +0100', 10), huge, rec('2024-01-01 08:02:00 +0100', 30)].join('\n')));
    expect(ofKind(records, 'quantity').map((r) => r.value)).toEqual([10]);
    expect(rejected.map((r) => r.reason)).toEqual([`a tag or text longer than ${MAX_TAG_CHARS} characters; the rest of the document is not read`]);
  });

  it(`nesting deeper than ${MAX_DEPTH} levels, or an unclosed comment, stops the reading with a reason instead of filling memory`, async () => {
    const deep = await decode(exportXml([rec('2024-01-01 08:00:00 +0100', 10), ` <Record>${'<a>'.repeat(200)}`].join('\n')));
    expect(ofKind(deep.records, 'quantity').map((r) => r.value)).toEqual([10]);
    expect(deep.rejected.map((r) => r.reason)).toContain(`elements nested deeper than ${MAX_DEPTH}; the rest of the document is not read`);
    const comment = await decode(exportXml([rec('2024-01-01 08:00:00 +0100', 10), ' <!--', ...Array.from({ length: 60_000 }, (_, i) => rec('2024-01-01 09:00:00 +0100', i))].join('\n')));
    expect(ofKind(comment.records, 'quantity').map((r) => r.value)).toEqual([10]);
    expect(comment.rejected.map((r) => r.reason)).toEqual([`no element in the last ${MAX_TAG_CHARS} characters (an unclosed comment or CDATA section, or damage the parser cannot step over); the rest of the document is not read`]);
  });
});

describe('apple-health: deterministic ids and order (issue 21; contracts §13 unchanged)', () => {
  it('the same bytes give the same items in the same order', async () => {
    const xml = exportXml(BODY);
    expect((await decode(xml)).items).toEqual((await decode(xml)).items);
  });

  it('ids come from the content: the same sample exported in another zone keeps its id; another value or source does not', async () => {
    const a = await decode(exportXml(rec('2024-01-01 08:00:00 +0100', 10)));
    const otherZone = await decode(exportXml(rec('2024-01-01 02:00:00 -0500', 10)));
    const otherValue = await decode(exportXml(rec('2024-01-01 08:00:00 +0100', 11)));
    const otherSource = await decode(exportXml(rec('2024-01-01 08:00:00 +0100', 10, 'Other Phone')));
    const id = a.records[0]!.external_id;
    expect(id).toMatch(/^ah:[0-9a-f]{32}$/);
    expect(otherZone.records[0]!.external_id).toBe(id);
    expect(otherValue.records[0]!.external_id).not.toBe(id);
    expect(otherSource.records[0]!.external_id).not.toBe(id);
  });
  it(`contracts §18 (issue 34): a top-level element keeps at most ${MAX_KEPT_CHARS} characters of its descendants' names and attributes; the rest is read and dropped`, async () => {
    const big = 'y'.repeat(6 * 1024 * 1024);
    const workout = ` <Workout workoutActivityType="HKWorkoutActivityTypeRunning">${Array.from({ length: 3 }, (_, i) => `<MetadataEntry key="k${i}" value="${big}"/>`).join('')}<MetadataEntry key="small" value="1"/></Workout>`;
    const xml = exportXml([workout, rec('2024-01-01 08:00:00 +0100', 10)].join('\n'));
    const elements = [];
    for await (const item of readTopLevelElements(Readable.from([Buffer.from(xml)]))) if ('element' in item) elements.push(item.element);
    const kept = elements.find((e) => e.name === 'Workout')!;
    expect(kept.children.map((c) => c.attrs.key)).toEqual(['k0', 'k1', 'small']);
    expect(kept.dropped).toBe(1);
    expect(elements.filter((e) => e.name === 'Record')).toHaveLength(1);
  });
});
