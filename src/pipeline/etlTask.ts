import type { EtlOutcome } from '../../commands/ingestion/finishEtlJob.js';
import type { DeviceParser } from '../../commands/ingestion/records.js';
import type { UploadAccepted } from '../../commands/ingestion/upload.js';
import { loadState } from '../../commands/shared/commandHandler.js';
import { userState, userStream } from '../../commands/users/user.js';
import type { EventStore } from '../eventstore/eventStore.js';
import type { RawStore } from '../rawstore/rawStore.js';
import { EtlCancelledError, runEtlJob } from './runEtlJob.js';

/** One claimed job's run, as handed to an ETL thread: plain data, since it is cloned across. */
export type EtlTask = { jobStream: string; upload: UploadAccepted['data'] };

/** What a run ends with; a failure is thrown. */
export type EtlRunOutcome = Extract<EtlOutcome, { kind: 'succeeded' | 'discarded' }>;

export type EtlTaskDeps = { eventStore: EventStore; rawStore: RawStore; parsers: Readonly<Record<string, DeviceParser>> };

/**
 * Runs a claimed job: normalises its payload into record events (`runEtlJob`), stopping if its
 * user is being deleted. The claim before and the outcome after are the caller's.
 */
export async function runEtlTask(deps: EtlTaskDeps, task: EtlTask): Promise<EtlRunOutcome> {
  const { upload } = task;
  const parser = deps.parsers[upload.provider];
  if (!parser) throw new Error(`no parser for ${upload.provider}`);
  const userGone = async () => (await loadState(deps.eventStore, userStream(upload.user_id), userState)).state.status !== 'active';
  try {
    return await runEtlJob(deps.eventStore, deps.rawStore, parser, task.jobStream, upload, userGone);
  } catch (err) {
    // An error that crosses a thread boundary arrives as a plain Error with only its message, so
    // the cancellation travels as an outcome instead.
    if (err instanceof EtlCancelledError) return { kind: 'discarded', reason: 'user deleted' };
    throw err;
  }
}
