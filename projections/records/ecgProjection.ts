import type { RecordsIngested } from '../../commands/ingestion/ingestedEvents.js';
import type { EcgRecord } from '../../commands/ingestion/records.js';
import type { Change } from '../../src/readstore/readStore.js';
import { defineProjection } from '../../src/projector/projection.js';
import { ownedFields, utcDay, type OwnedFields, type RecordDocBase } from './recordDoc.js';
import { recordId, recordKey } from './recordIds.js';

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
export const ecgProjection = defineProjection<RecordsIngested<EcgRecord>>({
  name: 'ecg',
  collections: [
    {
      name: 'ecg_recordings',
      indexes: [{ fields: [['user_id', 1], ['start_date', 1], ['id', 1]] }, { fields: [['user_id', 1], ['day', 1]] }],
    },
    // Read by `_id` (the recording's key) only.
    { name: 'ecg_voltages' },
  ],
  eventTypes: ['ecg.ingested'],
  evolve: (event) => {
    const d = event.data;
    return d.records.flatMap((r, i): Change[] => {
      const { kind: _kind, voltages, ...fields } = r;
      const key = recordKey(d.user_id, d.provider, r.external_id);
      const owned = ownedFields(d, utcDay(r.start_date));
      const doc: EcgVoltagesDoc = { _id: key, recording_key: key, provider: r.provider, sampling_frequency_hz: r.sampling_frequency_hz, voltages, ...owned };
      return [
        {
          op: 'update',
          collection: 'ecg_recordings',
          id: key,
          upsert: true,
          set: { ...fields, ...owned },
          setOnInsert: { id: recordId(event.globalPosition, i) },
        },
        { op: 'put', collection: 'ecg_voltages', doc },
      ];
    });
  },
});
