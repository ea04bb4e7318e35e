import Database from 'better-sqlite3';
import { UnreadableExportError, messageOf } from '../sources/files/exportShared/unreadableExport.js';
import type { CheckAnswer, CheckTask } from './untrustedFileCheck.js';

/**
 * The process of one request-time check of a stranger's SQLite file (untrustedFileCheck.ts): the
 * file is opened, its schema judged and its integrity checked here, never in the service's
 * process, so that it can be killed when the check outlives its deadline. A worker thread would
 * not do: better-sqlite3 cannot interrupt a statement, and a thread's termination waits until the
 * native call returns (measured: a thread in a 33 s `quick_check`, terminated after 1.5 s, ended
 * at 33.6 s).
 *
 * SQLite's heap is capped for the whole process (PRAGMA hard_heap_limit is process-wide, which is
 * why the service's own connections cannot use it): a file that makes SQLite allocate more fails
 * its check instead of growing the machine's memory.
 */
const task = await new Promise<CheckTask>((resolve) => process.once('message', (m) => resolve(m as CheckTask)));

async function check(): Promise<CheckAnswer> {
  const limiter = new Database(':memory:');
  limiter.pragma(`hard_heap_limit = ${task.maxSqliteHeapBytes}`);
  limiter.close();
  const body = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
  // Each kind loads only its own reader: the process is started per check, and its start is the check's overhead.
  if (task.kind === 'device-c') {
    const { openExport } = await import('../sources/files/device-c/sqliteExport.js');
    const opened = openExport(body);
    if ('error' in opened) return { refusal: opened.error };
    opened.db.close();
    return { refusal: null };
  }
  const { bufferByteSource } = await import('../sources/files/exportShared/byteSources.js');
  const { checkHealthConnectExport } = await import('../sources/files/health-connect/healthConnectDecoder.js');
  try {
    await checkHealthConnectExport(bufferByteSource(body), { tempDir: task.tempDir, maxDatabaseBytes: task.maxDatabaseBytes });
    return { refusal: null };
  } catch (err) {
    if (err instanceof UnreadableExportError) return { refusal: messageOf(err) };
    throw err;
  }
}

const answer = await check().catch((err: unknown): CheckAnswer => ({ failure: messageOf(err) }));
process.send!(answer, () => process.disconnect());
