/**
 * Text on its way from export.xml's bytes to the XML parser. Two repairs, both needed by real
 * exports: characters XML forbids (C0 controls other than tab and newlines, U+FFFE, U+FFFF) are
 * dropped, since third-party apps write them into names and metadata and one would stop a conforming
 * parser; and the document type declaration is cut out before the parser sees it, since some iOS
 * versions write a damaged internal subset and nothing in it (element and attribute lists, no
 * entities) is needed to read the records. Lines keep their numbers: `linesRemoved` says how many
 * newlines the cut declaration held.
 */

// eslint-disable-next-line no-control-regex
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
/** The prolog is looked at up to this size for the declaration to cut; beyond, text passes unchanged. */
const MAX_PROLOG_CHARS = 4 * 1024 * 1024;

export class XmlTextCleaner {
  /** Newlines inside the cut declaration (parser line + this = line in the file, after it). */
  linesRemoved = 0;
  /** Where the cut was, as a line in the file (lines after it are shifted by linesRemoved). */
  cutAtLine = 0;
  /** Characters dropped as invalid in XML. */
  dropped = 0;
  private prolog: string | null = '';

  push(text: string): string {
    const clean = this.filter(text);
    if (this.prolog === null) return clean;
    this.prolog += clean;
    return this.cutDoctype(false);
  }

  end(): string {
    return this.prolog === null ? '' : this.cutDoctype(true);
  }

  private filter(text: string): string {
    INVALID_XML_CHARS.lastIndex = 0;
    if (!INVALID_XML_CHARS.test(text)) return text;
    const out = text.replace(INVALID_XML_CHARS, '');
    this.dropped += text.length - out.length;
    return out;
  }

  /** Returns what can go to the parser now; keeps the prolog until the first element shows. */
  private cutDoctype(final: boolean): string {
    const s = this.prolog!;
    const start = s.indexOf('<!DOCTYPE');
    const root = firstElementAt(s, start === -1 ? 0 : start + 9);
    if (root === -1 && !final && s.length < MAX_PROLOG_CHARS) return '';
    this.prolog = null;
    if (start === -1 || root === -1) return s;
    const cut = s.slice(start, root);
    for (let i = cut.indexOf('\n'); i !== -1; i = cut.indexOf('\n', i + 1)) this.linesRemoved++;
    this.cutAtLine = countLines(s, start);
    return s.slice(0, start) + s.slice(root);
  }
}

/** Index of the first start tag `<Name` (a letter after `<`) from `from`, or -1. */
function firstElementAt(s: string, from: number): number {
  for (let i = s.indexOf('<', from); i !== -1; i = s.indexOf('<', i + 1)) {
    const c = s.charCodeAt(i + 1);
    // Element declarations inside the subset start `<!`; a start tag starts with a name character.
    if ((c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95) return i;
  }
  return -1;
}

function countLines(s: string, upTo: number): number {
  let n = 1;
  for (let i = s.indexOf('\n'); i !== -1 && i < upTo; i = s.indexOf('\n', i + 1)) n++;
  return n;
}
