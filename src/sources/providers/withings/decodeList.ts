import type { NormalizedRecord, ParseItem } from '../../../../commands/ingestion/records.js';
import { decodeDocuments, RecordError, type Json } from '../../shared/connectorRecords.js';
import { storedBody } from './withingsAnswer.js';

/**
 * A stored Withings answer `{status, body: {<list>: […], more, offset}}`: each element of the list
 * decoded on its own (a bad one is rejected alone); an answer carrying an error status is one
 * rejected item. `context` gets the body's own fields (the answer-wide `timezone`).
 */
export async function* decodeWithingsList(
  payload: Buffer,
  list: string,
  decode: (doc: Json, body: Json) => NormalizedRecord[],
  what: string,
): AsyncIterable<ParseItem> {
  let body: Json;
  try {
    body = storedBody(JSON.parse(payload.toString('utf8')));
  } catch (err) {
    if (!(err instanceof RecordError) && !(err instanceof SyntaxError)) throw err;
    yield { rejected: { location: 'body', reason: `${what}: ${err instanceof SyntaxError ? 'the answer is not JSON' : err.message}`, excerpt: payload.subarray(0, 1024).toString('utf8') } };
    return;
  }
  yield* decodeDocuments(Buffer.from(JSON.stringify(body)), list, (doc) => decode(doc, body), what);
}
