import type { EcgRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { ownedFields, utcDay, type OwnedFields, type RecordDocBase } from './recordDoc.js';
import { defineRecordsProjection, recordUpsert, RECORD_BOOLEANS, RECORD_COLUMNS } from './recordProjection.js';

/** A recording without its voltages (spec "ECG recording", list form). */
export type EcgRecordingDoc = Omit<EcgRecord, 'kind' | 'voltages'> & RecordDocBase;

/** The voltages of one recording, kept apart so lists never load them; `_id` is the recording's key. */
export type EcgVoltagesDoc = OwnedFields & {
  _id: string;
  recording_key: string;
  provider: string;
  sampling_frequency_hz: number | null;
  /** Microvolts, one per measurement, in order. */
  voltages: number[];
};

/** ECG recordings and their voltage samples; a re-sent recording updates both. */
export const ecgProjection = defineRecordsProjection<EcgRecord>({
  name: 'ecg',
  eventType: 'ecg.ingested',
  collections: [
    {
      name: 'ecg_recordings',
      columns: RECORD_COLUMNS,
      booleans: RECORD_BOOLEANS,
      indexes: [{ fields: [['user_id', 1], ['start_date', 1], ['id', 1]] }, { fields: [['user_id', 1], ['day', 1]] }],
    },
    // Read by `_id` (the recording's key); by user_id on erasure.
    { name: 'ecg_voltages', indexes: [{ fields: [['user_id', 1]] }] },
  ],
  evolve: (event, sequence) =>
    event.data.records.flatMap((r, i): Change[] => {
      const { kind: _kind, voltages, ...fields } = r;
      const day = utcDay(r.start_date);
      const recording = recordUpsert(event, sequence, 'ecg_recordings', i, fields, day);
      const key = recording.id;
      const doc: EcgVoltagesDoc = { _id: key, recording_key: key, provider: r.provider, sampling_frequency_hz: r.sampling_frequency_hz, voltages, ...ownedFields(event.data, day) };
      return [recording, { op: 'put', collection: 'ecg_voltages', doc }];
    }),
});
