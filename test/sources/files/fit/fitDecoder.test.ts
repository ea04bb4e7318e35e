import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import { fitDecoder, fitSniff } from '../../../../src/sources/files/fit/fitDecoder.js';
import { fitMessages } from '../../../../src/sources/files/fit/fitMessages.js';
import { formatOf } from '../../../../src/sources/files/formatOf.js';
import { monitoringFit } from '../../../fixtures/fit/monitoringFit.js';
import { zipEntries } from '../../../fixtures/zip/buildZip.js';
import { decodeAll } from '../decodeAll.js';
import { realdataPath } from '../realdata.js';

/** contracts §20 and the §18 bounds on a stranger's FIT file: header and CRC checks, message and developer-field bounds, nested zips. */
const RUN = realdataPath('fit', 'garmin-fenix-5-run.fit');
const DEV = realdataPath('fit', 'DeveloperData.fit');
const run = () => Buffer.from(readFileSync(RUN!));
const damageOf = (bytes: Uint8Array, limits = { maxMessages: 2_000_000, maxDeveloperFields: 1024 }) => [...fitMessages(bytes, limits)].flatMap((i) => ('damage' in i ? [i.damage] : []));

describe('fit decoder (contracts §20, §18)', () => {
  it('refuses at the request a body that is neither a FIT file nor a zip (contracts §12), and takes either', () => {
    expect(fitSniff(Buffer.alloc(0))).toMatch(/empty upload/);
    expect(fitSniff(Buffer.from('{"not":"fit"}'))).toMatch(/neither a FIT file .* nor a zip archive/);
    const header = Buffer.alloc(14);
    header[0] = 14;
    header.write('.FIT', 8, 'latin1');
    expect(fitSniff(header)).toBeNull();
    expect(fitSniff(Buffer.from([0x50, 0x4b, 0x03, 0x04]))).toBeNull();
  });

  it('a zip that holds no .fit file is unreadable as a whole, naming what it holds', async () => {
    const zip = await zipEntries([{ name: 'notes.txt', data: Buffer.from('hello') }]);
    await expect(decodeAll(fitDecoder(), bufferByteSource(zip))).rejects.toThrow(/holds no \.fit file; it holds notes\.txt/);
  });

  it('a monitoring file none of whose readings can be read is unreadable as a whole, its error the count of why (contracts §17, §20)', async () => {
    // 16-bit times with no full time before them: nothing can be placed.
    const bytes = monitoringFit([{ ts16: 100, hr: 70 }, { ts16: 160, type: 6, steps: 40 }]);
    await expect(decodeAll(fitDecoder(), bufferByteSource(bytes))).rejects.toThrow(
      'the file: 2 monitoring messages were not read: 2 whose time is neither a full timestamp nor a 16-bit one after a full time in the file',
    );
  });

  it.skipIf(!RUN)('the CLI tells a .fit file and a zip of them from their bytes (issue 39)', async () => {
    expect(await formatOf(bufferByteSource(run()))).toEqual({ slug: 'fit' });
    expect(await formatOf(bufferByteSource(await zipEntries([{ name: 'a/run.fit', data: run() }])))).toEqual({ slug: 'fit' });
  });

  it.skipIf(!RUN)('a file whose CRC does not match is not trusted: one rejection at the CRC, and as the whole upload it is unreadable', async () => {
    const bytes = run();
    bytes[200] = bytes[200]! ^ 0xff;
    expect(damageOf(bytes)).toEqual([{ offset: bytes.length - 2, reason: expect.stringMatching(/CRC does not match/) }]);
    await expect(decodeAll(fitDecoder(), bufferByteSource(bytes))).rejects.toThrow(/the file byte \d+: the FIT file CRC does not match/);
  });

  it.skipIf(!RUN)('a header CRC that does not match ends the reading at the header', () => {
    const bytes = run();
    bytes[12] = bytes[12]! ^ 0xff;
    expect(damageOf(bytes)).toEqual([{ offset: 12, reason: 'the FIT header CRC does not match the header' }]);
  });

  it.skipIf(!RUN)('messages beyond the bound are not read: one damage naming the bound (§18)', () => {
    const messages = [...fitMessages(run(), { maxMessages: 10, maxDeveloperFields: 1024 })].filter((i) => 'message' in i);
    // The bound counts every data message, those of no profile message (not handed on) too.
    expect(messages.length).toBeGreaterThan(0);
    expect(messages.length).toBeLessThanOrEqual(10);
    expect(damageOf(run(), { maxMessages: 10, maxDeveloperFields: 1024 })).toEqual([{ offset: expect.any(Number), reason: 'more than 10 messages: the rest is not read' }]);
  });

  it.skipIf(!DEV)('developer field descriptions beyond the bound are not read (§18)', () => {
    const bytes = readFileSync(DEV!);
    expect(damageOf(bytes)).toEqual([]);
    expect(damageOf(bytes, { maxMessages: 2_000_000, maxDeveloperFields: 0 })).toEqual([{ offset: expect.any(Number), reason: 'more than 0 developer field descriptions: the rest is not read' }]);
  });

  it.skipIf(!RUN)('a zip inside the zip is read one level deep; one nested deeper is a rejection naming it', async () => {
    const inner = await zipEntries([{ name: 'run.fit', data: run() }]);
    const deeper = await zipEntries([{ name: 'deeper.zip', data: inner }]);
    const outer = await zipEntries([{ name: 'UploadedFiles_0-_Part1.zip', data: inner }, { name: 'nested.zip', data: deeper }]);
    const tempDir = mkdtempSync(join(tmpdir(), 'fit-nested-'));
    try {
      const { records, rejected } = await decodeAll(fitDecoder({ tempDir }), bufferByteSource(outer));
      const direct = await decodeAll(fitDecoder(), bufferByteSource(run()));
      expect(records).toHaveLength(direct.records.length);
      expect(rejected).toEqual([expect.objectContaining({ location: 'nested.zip/deeper.zip', reason: expect.stringMatching(/one level of nesting/) })]);
      // The inner zips were read from temporary copies, each removed once read.
      expect(readdirSync(tempDir)).toEqual([]);
    } finally {
      rmSync(tempDir, { recursive: true, force: true });
    }
  });
});
