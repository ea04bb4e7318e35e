import { parentPort, workerData } from 'node:worker_threads';
import { bufferByteSource } from '../sources/files/exportShared/byteSources.js';
import { openExport } from '../sources/files/device-c/sqliteExport.js';
import { UnreadableExportError, messageOf } from '../sources/files/exportShared/unreadableExport.js';
import { checkHealthConnectExport } from '../sources/files/health-connect/healthConnectDecoder.js';
import type { CheckAnswer, CheckTask } from './untrustedFileCheck.js';

/**
 * The thread of one request-time check of a stranger's SQLite file (untrustedFileCheck.ts): the
 * file is opened, its schema judged and its integrity checked here, never on the thread that
 * serves requests, so that the thread can be terminated when the check outlives its deadline
 * (issue 34 §1: better-sqlite3 gives no way to interrupt a running statement).
 */
const task = workerData as CheckTask;

async function check(): Promise<CheckAnswer> {
  const body = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
  if (task.kind === 'device-c') {
    const opened = openExport(body);
    if ('error' in opened) return { refusal: opened.error };
    opened.db.close();
    return { refusal: null };
  }
  try {
    await checkHealthConnectExport(bufferByteSource(body), { tempDir: task.tempDir, maxDatabaseBytes: task.maxDatabaseBytes });
    return { refusal: null };
  } catch (err) {
    if (err instanceof UnreadableExportError) return { refusal: messageOf(err) };
    throw err;
  }
}

check().then(
  (answer) => parentPort!.postMessage(answer),
  (err: unknown) => parentPort!.postMessage({ failure: messageOf(err) } satisfies CheckAnswer),
);
