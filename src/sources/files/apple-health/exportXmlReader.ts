import { SaxesParser } from 'saxes';
import { XML_LIMITS } from '../exportShared/parserLimits.js';
import { XmlTextCleaner } from './xmlText.js';

/**
 * export.xml as a stream of its top-level elements (the children of <HealthData>: Record,
 * Correlation, Workout, ActivitySummary, …), each assembled with its descendants and yielded as
 * soon as it closes, so memory holds one element at a time whatever the document's size.
 *
 * saxes rather than sax: it is several times faster (the document is gigabytes), it checks
 * well-formedness instead of guessing, and it reports each error to a handler and carries on, so
 * a damaged element can be judged on its own while the rest of the document is read. Its
 * recovery is good for the damage real exports have: attribute names with spaces (old iOS wrote
 * third-party metadata keys as attributes) come through as their last word, reported as errors.
 */

export type XmlElement = {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  /** 1-based line of the start tag's end in the file. */
  line: number;
  /** Well-formedness errors met inside the element (null when none). */
  errors: string[] | null;
  /** Descendants beyond MAX_DESCENDANTS or MAX_KEPT_CHARS, not kept. */
  dropped: number;
};

export type TopLevelItem = { element: XmlElement } | { problem: { line: number; reason: string } };

/** Bounds on one top-level element and the document (parserLimits.ts says why each). */
export const MAX_DESCENDANTS = XML_LIMITS.maxDescendants;
export const MAX_KEPT_CHARS = XML_LIMITS.maxKeptChars;
/**
 * The parser buffers a tag (name, attributes) whole: no run of text without a `>` may exceed this,
 * or reading stops with a problem (a stranger's file could otherwise hold a gigabyte attribute).
 */
export const MAX_TAG_CHARS = XML_LIMITS.maxTagChars;
/** Deeper nesting than this is not an export: reading stops. */
export const MAX_DEPTH = XML_LIMITS.maxDepth;
/** Errors kept per element (the first is the one reported). */
const MAX_ELEMENT_ERRORS = 10;
/** Text goes to the parser in slices of this many characters. */
const FEED_SLICE = 256 * 1024;
/**
 * A chunk of the bytes is decoded and parsed this many bytes at a time, and the elements of each
 * slice yielded before the next is read. The stored object comes in chunks of a MiB: decoded
 * whole, each was a string of 1–2 MB (two bytes a character once one character is beyond
 * Latin-1), kept alive by the attribute values sliced from it until its last record was decided,
 * and so promoted to the old generation, and its ~2,000 elements outlived the ETL thread's young
 * collections: the old generation grew by twice the file and was marked every ~70 ms (issue 38).
 */
const READ_SLICE = 16 * 1024;
/** Errors outside any element reported one by one, then one summary. */
const MAX_LOOSE_ERRORS = 1000;

/** `12:34: message` → `message` (the line is reported separately, shifted to the file's numbering). */
function errorText(err: Error): string {
  return err.message.replace(/^(?:[^:]*:)?\d+:\d+: /, '').replace(/\.$/, '');
}

function charsOf(el: XmlElement): number {
  let n = el.name.length;
  for (const k in el.attrs) n += k.length + el.attrs[k]!.length;
  return n;
}

export async function* readTopLevelElements(bytes: AsyncIterable<Buffer | string>): AsyncGenerator<TopLevelItem> {
  const cleaner = new XmlTextCleaner();
  // Faster than StringDecoder here; invalid bytes become U+FFFD either way.
  const decoder = new TextDecoder('utf-8');
  const parser = new SaxesParser({ position: true });
  const ready: TopLevelItem[] = [];
  let depth = 0;
  let rootClosed = false;
  let current: XmlElement | null = null;
  let descendants = 0;
  /** Characters of the names and attributes the current top-level element keeps in its descendants. */
  let keptChars = 0;
  const stack: XmlElement[] = [];
  let looseErrors = 0;
  const line = () => parser.line + cleaner.linesRemoved;

  /**
   * Errors in a start tag (its attributes) are reported before the tag itself: held here until the
   * next event says whose they are, a top-level element's or nobody's.
   */
  let pending: { line: number; reason: string }[] = [];
  const loose = () => {
    for (const p of pending) {
      looseErrors++;
      if (looseErrors <= MAX_LOOSE_ERRORS) ready.push({ problem: { line: p.line, reason: `not well-formed XML: ${p.reason}` } });
    }
    pending = [];
  };

  /** Characters given to the parser, and how many had been when it last reported an element. */
  let fed = 0;
  let lastEventAt = 0;
  let tooDeep = false;
  parser.on('opentag', (tag) => {
    depth++;
    lastEventAt = fed;
    if (depth > MAX_DEPTH) return void (tooDeep = true);
    if (depth === 1) return loose();
    const el: XmlElement = { name: tag.name, attrs: tag.attributes as Record<string, string>, children: [], line: line(), errors: null, dropped: 0 };
    if (depth === 2) {
      if (pending.length) el.errors = pending.map((p) => p.reason);
      pending = [];
      current = el;
      descendants = 0;
      keptChars = 0;
      stack.length = 0;
      stack.push(el);
      return;
    }
    const parent = stack[stack.length - 1];
    if (current && parent) {
      const cost = charsOf(el);
      if (++descendants <= MAX_DESCENDANTS && keptChars + cost <= MAX_KEPT_CHARS) {
        keptChars += cost;
        parent.children.push(el);
      } else current.dropped++;
    }
    stack.push(el);
  });
  parser.on('closetag', () => {
    lastEventAt = fed;
    if (depth > MAX_DEPTH) return void depth--;
    if (depth <= 2 && pending.length && !current) loose();
    depth--;
    if (depth === 0) rootClosed = true;
    if (depth === 1 && current) {
      ready.push({ element: current });
      current = null;
      stack.length = 0;
    } else if (depth >= 2) stack.pop();
  });
  parser.on('error', (err) => {
    const reason = errorText(err);
    if (current) {
      const c: XmlElement = current;
      if ((c.errors ??= []).length < MAX_ELEMENT_ERRORS) c.errors.push(reason);
      return;
    }
    if (pending.length < MAX_LOOSE_ERRORS) pending.push({ line: line(), reason });
    else looseErrors++;
  });

  let sinceTagEnd = 0;
  /** A `<` after the last `>`: the text so far ends inside a tag. */
  let inTag = false;
  function feed(text: string): boolean {
    // In slices, so that a long run without `>` is seen however the bytes were chunked.
    for (let from = 0; from < text.length; from += FEED_SLICE) {
      const slice = from === 0 && text.length <= FEED_SLICE ? text : text.slice(from, from + FEED_SLICE);
      const gt = slice.lastIndexOf('>');
      const lt = slice.lastIndexOf('<');
      if (lt > gt) inTag = true;
      else if (gt !== -1) inTag = false;
      const first = gt === -1 ? -1 : slice.indexOf('>');
      const run = first === -1 ? sinceTagEnd + slice.length : sinceTagEnd + first;
      sinceTagEnd = gt === -1 ? run : slice.length - gt - 1;
      if (run > MAX_TAG_CHARS) {
        ready.push({ problem: { line: line(), reason: `a tag or text longer than ${MAX_TAG_CHARS} characters; the rest of the document is not read` } });
        return false;
      }
      fed += slice.length;
      parser.write(slice);
      if (tooDeep) {
        ready.push({ problem: { line: line(), reason: `elements nested deeper than ${MAX_DEPTH}; the rest of the document is not read` } });
        return false;
      }
      // An unclosed comment, CDATA section or instruction, or damage the parser cannot step over,
      // would have it buffer or skip the rest without a word: a long stretch without an element ends the reading.
      if (fed - lastEventAt > MAX_TAG_CHARS) {
        ready.push({ problem: { line: line(), reason: `no element in the last ${MAX_TAG_CHARS} characters (an unclosed comment or CDATA section, or damage the parser cannot step over); the rest of the document is not read` } });
        return false;
      }
    }
    return true;
  }

  let complete = true;
  for await (const chunk of bytes) {
    let ok = true;
    for (let from = 0; ok && from < chunk.length; from += READ_SLICE) {
      const piece = chunk.length <= READ_SLICE ? chunk : typeof chunk === 'string' ? chunk.slice(from, from + READ_SLICE) : chunk.subarray(from, from + READ_SLICE);
      ok = feed(cleaner.push(typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true })));
      yield* ready;
      ready.length = 0;
    }
    if (!ok) {
      loose();
      complete = false;
      break;
    }
  }
  if (complete) {
    feed(cleaner.push(decoder.decode()));
    feed(cleaner.end());
    loose();
    const open = current as XmlElement | null;
    if (open) ready.push({ problem: { line: open.line, reason: `the document ends inside <${open.name}> (the file is cut short)` } });
    else if (inTag) ready.push({ problem: { line: line(), reason: 'the document ends inside a tag (the file is cut short)' } });
    else if (!rootClosed && looseErrors > 0) {
      // saxes cannot step over every kind of damage: after some (a `<` that starts no tag) it reads nothing more.
      ready.push({ problem: { line: line(), reason: 'nothing after the damage reported above could be read' } });
    } else if (!rootClosed) ready.push({ problem: { line: line(), reason: 'the document ends before </HealthData> (the file may be cut short)' } });
    // The parser's own end-of-document complaints repeat what was just said.
    parser.on('error', () => {});
    parser.close();
  }
  if (looseErrors > MAX_LOOSE_ERRORS) ready.push({ problem: { line: line(), reason: `${looseErrors - MAX_LOOSE_ERRORS} further XML errors outside elements` } });
  yield* ready;
}
