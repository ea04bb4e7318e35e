import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteReadStore } from '../../src/readstore/sqliteReadStore.js';
import { tempDir } from '../support/tmp.js';

describe('embedded read store: change stamp across connections (issue 27: kept credentials and answers)', () => {
  it("moves when another connection to the same file commits (another thread or process, as the CLI's runners), and stays put while nothing is written", async () => {
    const path = join(tempDir(), 'read.sqlite');
    const http = new SqliteReadStore({ path });
    const other = new SqliteReadStore({ path });
    await http.ensureCollections([{ name: 'api_keys' }]);
    await other.ensureCollections([{ name: 'api_keys' }]);
    const before = http.changeStamp();
    expect(http.changeStamp()).toBe(before);
    await other.applyChanges([{ op: 'put', collection: 'api_keys', doc: { _id: 'h', revoked_at: null } }]);
    const afterPut = http.changeStamp();
    expect(afterPut).not.toBe(before);
    await other.applyChanges([{ op: 'update', collection: 'api_keys', id: 'h', set: { revoked_at: '2026-11-26T00:00:00.000Z' } }]);
    expect(http.changeStamp()).not.toBe(afterPut);
    expect(await http.get('api_keys', 'h')).toMatchObject({ revoked_at: '2026-11-26T00:00:00.000Z' });
    await other.close();
    await http.close();
  });
});
