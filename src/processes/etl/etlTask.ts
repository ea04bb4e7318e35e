import { join } from 'node:path';
import { loadProviderDataHead } from '../../../commands/deletions/providerData.js';
import type { EtlOutcome } from '../../../commands/ingestion/finishEtlJob.js';
import type { DeviceParser } from '../../../commands/ingestion/records.js';
import type { ImportDecoder } from '../../sources/files/importSource.js';
import type { RecordLedger } from '../../recordledger/recordLedger.js';
import type { UploadAccepted } from '../../../commands/ingestion/upload.js';
import { loadState } from '../../../commands/shared/commandHandler.js';
import { userState, userStream, type UserStatus } from '../../../commands/users/user.js';
import { DataKeyDestroyedError, type DataKeys } from '../../crypto/dataKeys.js';
import { eventSealer } from '../../crypto/recordSealing.js';
import { StreamDeletedError, type EventStore, type RecordedEvent } from '../../eventstore/eventStore.js';
import type { RawStore } from '../../rawstore/rawStore.js';
import { EtlCancelledError, runEtlJob } from './runEtlJob.js';

/** Where imports copy what cannot be read as a stream while they run; emptied at start-up (exportShared/temporaryFile.ts). */
export const importTempDir = (dataDir: string) => join(dataDir, 'import-tmp');

/** Uploads of this many bytes or more are bulk jobs (the `etl.bulk` lane, etlWorker.ts; small jobs first in a thread, smallJobsFirst.ts). */
export const BULK_UPLOAD_BYTES = 1024 * 1024;

/** One claimed job's run, as handed to an ETL thread: plain data, since it is cloned across. */
export type EtlTask = {
  jobStream: string;
  upload: UploadAccepted['data'];
  /**
   * Revision of the claim's `etl.job_started` on the job stream: once the stream shows a later
   * claim, another worker took the job over (attempt numbers repeat across take-overs).
   */
  claimRevision?: number;
};

/** What a run ends with; a failure is thrown. */
export type EtlRunOutcome = Extract<EtlOutcome, { kind: 'succeeded' | 'unreadable' | 'discarded' }>;

export type EtlTaskDeps = {
  eventStore: EventStore;
  rawStore: RawStore;
  parsers: Readonly<Record<string, DeviceParser>>;
  /** The native export formats (contracts §13), read by range from the raw store. */
  importDecoders?: Readonly<Record<string, ImportDecoder>>;
  /** Which records earlier uploads stored (contracts §13 `unchanged`); without it every record is written. */
  ledger?: RecordLedger;
  dataKeys: DataKeys;
  /** Awaited by the run before each append (a bulk job yielding to small ones: smallJobsFirst.ts). */
  pause?: () => Promise<void> | undefined;
};

/**
 * Runs a claimed job: normalises its payload into record events sealed with the data key of the
 * upload's generation (`runEtlJob`), stopping if its user is being deleted or its provider's data
 * erased. Either way the erasure has tombstoned the job's streams or soon will: an append it
 * refuses ends the run the same way. The claim before and the outcome after are the caller's.
 */
export async function runEtlTask(deps: EtlTaskDeps, task: EtlTask): Promise<EtlRunOutcome> {
  const { upload } = task;
  const parser = deps.importDecoders?.[upload.provider] ?? deps.parsers[upload.provider];
  if (!parser) throw new Error(`no parser for ${upload.provider}`);
  const generation = upload.key_generation ?? 0;
  const userGone = async () => (await userStatus(deps.eventStore, upload.user_id)) !== 'active';
  const takenOver = async () => {
    if (task.claimRevision === undefined) return false;
    const later = await deps.eventStore.readStream(task.jobStream, { fromRevision: task.claimRevision + 1 });
    return later.some((e) => e.type === 'etl.job_started');
  };
  const erased = async () => {
    // Checked before every append: a run whose job was taken over stops without appending more.
    if (await takenOver()) return true;
    if (await userGone()) return true;
    const head = await loadProviderDataHead(deps.eventStore, upload.user_id, upload.provider);
    return head.closed || head.erasingJob !== null || head.generation !== generation;
  };
  try {
    const { keyId, key } = await deps.dataKeys.issue({ userId: upload.user_id, provider: upload.provider, generation }, upload.tenant_id);
    // Payloads stored before data keys existed are in the clear: runEtlJob opens only sealed ones.
    // `unchanged` is judged for what users send (uploads, imports); a provider's pulls are written as pulled.
    return await runEtlJob(deps.eventStore, deps.rawStore, parser, task.jobStream, upload, erased, { sealer: eventSealer(keyId, key), dataKey: { key, keyId } }, { ...(deps.ledger && upload.tier === 'upload' ? { ledger: deps.ledger } : {}), pause: deps.pause });
  } catch (err) {
    // An error that crosses a thread boundary arrives as a plain Error with only its message, so
    // the cancellation travels as an outcome instead.
    if (err instanceof EtlCancelledError) {
      if (await takenOver()) return { kind: 'discarded', reason: 'taken over by another worker' };
      return { kind: 'discarded', reason: (await userGone()) ? 'user deleted' : 'data erased' };
    }
    if (err instanceof StreamDeletedError || err instanceof DataKeyDestroyedError) return { kind: 'discarded', reason: 'data erased' };
    throw err;
  }
}

/** User events read back, newest first, before the status is folded from the snapshot instead. */
const STATUS_PAGE = 16;

/**
 * The user's status as `loadState` folds it, read from the stream's end (issue 37: one read per
 * small job instead of the snapshot's and the stream's). It holds because `userState.evolve` sets
 * the status from the status event alone (registered, deletion requested, erased), whatever came
 * before: the newest of them decides it, and the events after it (tokens minted on the user's
 * stream before the token stream existed) leave it as it is. A stream with no status event among
 * its last few (issue 26: many tokens after the registration) is folded from its snapshot as before;
 * a tombstoned stream reads as the initial state, as `loadState` folds it.
 */
async function userStatus(eventStore: EventStore, userId: string): Promise<UserStatus> {
  let last: RecordedEvent[];
  try {
    last = await eventStore.readStream(userStream(userId), { direction: 'backwards', maxCount: STATUS_PAGE });
  } catch (err) {
    if (err instanceof StreamDeletedError) return userState.initialState().status;
    throw err;
  }
  const none = userState.initialState();
  for (const e of last) {
    const status = userState.evolve(none, e as never).status;
    if (status !== none.status) return status;
  }
  if (last.length < STATUS_PAGE) return none.status;
  return (await loadState(eventStore, userStream(userId), userState)).state.status;
}
