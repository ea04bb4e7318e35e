import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildHealthConnectDatabase } from '../../../fixtures/health-connect/buildHealthConnectExport.js';
import { withCheckBomb, withGeneratedColumnBomb } from '../../../fixtures/sqlite/sqliteBombs.js';
import { zipEntries } from '../../../fixtures/zip/buildZip.js';
import { bufferByteSource } from '../../../../src/sources/files/exportShared/byteSources.js';
import { UnreadableExportError } from '../../../../src/sources/files/exportShared/unreadableExport.js';
import { createHealthConnectDecoder } from '../../../../src/sources/files/health-connect/healthConnectDecoder.js';
import { decodeAll } from '../decodeAll.js';

/**
 * contracts §18, issue 34 §1, for exports that reach the ETL (resumable uploads of any size): the
 * decoder refuses a database whose schema would make SQLite run the sender's SQL, before its
 * integrity check, with an UnreadableExportError (the upload ends `failed` with its message)
 * instead of holding the ETL thread for minutes; its temporary copy is removed.
 */
let tempDir: string;
beforeEach(() => {
  tempDir = mkdtempSync(join(tmpdir(), 'hc-untrusted-'));
});
afterEach(() => rmSync(tempDir, { recursive: true, force: true }));

const zipOf = (db: Buffer) => zipEntries([{ name: 'health_connect_export.db', data: db }]);

describe('health-connect decoder: a database whose schema runs the sender\'s SQL is refused unread (contracts §18, issue 34 §1)', { timeout: 60_000 }, () => {
  for (const [label, bomb, named] of [
    ['a CHECK constraint bomb', withCheckBomb, /CHECK constraints in tables \(bomb_check\)/],
    ['a generated-column NOT NULL bomb', withGeneratedColumnBomb, /generated columns computed by more than arithmetic over stored columns \(bomb_generated\.x\)/],
  ] as const) {
    it(`contracts §18: refuses an otherwise real export holding ${label}, naming why, before any record; the copy is removed`, async () => {
      const zip = await zipOf(bomb(buildHealthConnectDatabase()));
      const decoding = decodeAll(createHealthConnectDecoder({ tempDir }), bufferByteSource(zip));
      const err = await decoding.then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(UnreadableExportError);
      expect((err as Error).message).toMatch(/^health_connect_export\.db is refused before its integrity check: its schema declares /);
      expect((err as Error).message).toMatch(named);
      expect(readdirSync(tempDir)).toEqual([]);
    });
  }
});
