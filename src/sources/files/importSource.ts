import type { Readable } from 'node:stream';
import type { ParseContext, ParseItem } from '../../../commands/ingestion/records.js';
/** The bytes of an upload, readable by range (a sealed raw object or a plain file; the pipeline decides). */
export interface ByteSource { readonly size: number; read(start: number, end: number): Readable /* [start, end) */ }
/** Why a body cannot be the named format, judged from its first bytes (contracts §12: 422), or null. */
export type Sniff = (head: Buffer) => string | null;
/** A native export format (contracts §13). Items come in a deterministic order: the same bytes give the same sequence, so a resumed import skips the first N items it already stored. */
export interface ImportDecoder { readonly slug: string; readonly sniff: Sniff; decode(source: ByteSource, ctx: ParseContext): AsyncIterable<ParseItem> }
