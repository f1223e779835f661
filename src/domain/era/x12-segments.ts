/**
 * ASC X12 tokenizing: the delimiters read from the ISA segment, then the text cut into segments and elements, chunk by
 * chunk so that a file of any size streams through in bounded memory. Loop grammar is not here (era-835.ts).
 */
import { describeUnstorable, storableText, unstorableAt } from '../storable-text.js';

export interface Delimiters {
  element: string;
  component: string;
  /** ISA11 in 00501 and later; null when ISA11 is a code (U in 00401), as files of older versions carry. */
  repetition: string | null;
  segment: string;
}

/** One segment: `elements[0]` is its id, so `elements[n]` is the element the standard numbers n (CLP04 = elements[4]). */
export interface Segment {
  id: string;
  elements: string[];
  /** 1-based position of the segment in the file. */
  index: number;
  /** 1-based line of the file on which the segment starts. */
  line: number;
}

/** Where a file is wrong: the segment (its text shortened), its position in the file and its line. */
export class X12Error extends Error {
  constructor(
    readonly reason: string,
    readonly at: { index: number; line: number; segment: string } | null,
  ) {
    super(storableText(at ? `segment ${at.index} (${at.segment}), line ${at.line}: ${reason}` : reason));
    this.name = 'X12Error';
  }

  static at(segment: Segment, reason: string, delimiters?: Delimiters): X12Error {
    const text = segment.elements.join(delimiters?.element ?? '*');
    return new X12Error(reason, {
      index: segment.index,
      line: segment.line,
      segment: text.length > 60 ? `${text.slice(0, 57)}...` : text,
    });
  }
}

const ISA_LENGTH = 106;
/** Widths of ISA01-ISA16: the segment is fixed-length, which is how its delimiters can be read before anything else. */
const ISA_WIDTHS = [2, 10, 2, 10, 2, 15, 2, 15, 6, 4, 1, 5, 9, 1, 1, 1];
/** A segment longer than this without a terminator means the terminator is not what ISA16 said, or the file is not X12. */
const MAX_SEGMENT_LENGTH = 64 * 1024;

/** The delimiters of an interchange, from its 106-character ISA segment (element at 3, component at 104, terminator at 105). */
export function readDelimiters(isa: string): Delimiters {
  const fail = (reason: string) => new X12Error(`bad ISA: ${reason}`, { index: 1, line: 1, segment: isa.slice(0, 40) });
  if (!isa.startsWith('ISA')) throw fail('an X12 file begins with the ISA segment');
  if (isa.length < ISA_LENGTH)
    throw fail(`the ISA segment is ${ISA_LENGTH} characters long; the file ends after ${isa.length}`);
  const element = isa[3];
  const segment = isa[105];
  const component = isa[104];
  if (/[A-Za-z0-9 ]/.test(element))
    throw fail(
      `the element separator (the character after ISA) must not be a letter, digit or space; it is "${element}"`,
    );
  const fields = isa.slice(4, 105).split(element);
  if (fields.length !== ISA_WIDTHS.length)
    throw fail(`ISA has ${ISA_WIDTHS.length} elements of fixed width; ${fields.length} were found before position 105`);
  const wrong = ISA_WIDTHS.findIndex((width, i) => fields[i].length !== width);
  if (wrong >= 0)
    throw fail(
      `ISA${String(wrong + 1).padStart(2, '0')} must be ${ISA_WIDTHS[wrong]} characters wide; it is "${fields[wrong]}"`,
    );
  if (component === segment || [component, segment].some((c) => c === element || /[A-Za-z0-9 ]/.test(c)))
    throw fail(
      `the component separator (ISA16) and segment terminator (position 106) must be distinct punctuation; they are "${component}" and "${segment}"`,
    );
  const notText = [element, segment].findIndex((c) => unstorableAt(c) >= 0);
  if (notText >= 0)
    throw fail(
      `the ${['element separator', 'segment terminator'][notText]} is ${describeUnstorable([element, segment][notText], 0)}, which is not text`,
    );
  const repetition = /[A-Za-z0-9]/.test(isa[82]) ? null : isa[82];
  return { element, component, repetition, segment };
}

/**
 * Cuts X12 text into segments as it arrives. Line breaks (and a byte-order mark) between segments are tolerated, as
 * real files have them after each terminator; the delimiters come from the first ISA.
 */
export class SegmentReader {
  private buffer = '';
  private started = false;
  private line = 1;
  private index = 0;
  delimiters: Delimiters | undefined;

  /** The segments completed by `chunk`. */
  push(chunk: string): Segment[] {
    this.buffer += chunk;
    if (!this.delimiters && !this.readIsa()) return [];
    return this.cut();
  }

  /** The end of the text: anything left after the last terminator is a truncated segment. */
  end(): void {
    if (!this.delimiters) {
      if (this.buffer.replace(/^\uFEFF/, '').trim() === '') throw new X12Error('the file is empty', null);
      readDelimiters(this.buffer.replace(/^\uFEFF/, '').trimStart());
    }
    const rest = this.skipBreaks(this.buffer, 0);
    if (rest < this.buffer.length) {
      const text = this.buffer.slice(rest);
      throw new X12Error(
        `the file ends inside a segment (truncated): "${text.slice(0, 40)}" has no segment terminator "${this.delimiters!.segment}"`,
        {
          index: this.index + 1,
          line: this.line,
          segment: text.slice(0, 3),
        },
      );
    }
  }

  private readIsa(): boolean {
    if (!this.started) {
      const text = this.buffer.replace(/^\uFEFF/, '');
      const start = this.skipBreaks(text, 0);
      if (start === text.length) return false;
      this.buffer = text.slice(start);
      this.started = true;
    }
    if (this.buffer.length < ISA_LENGTH) return false;
    this.delimiters = readDelimiters(this.buffer);
    return true;
  }

  /** Past the line breaks at `from`, counting them. */
  private skipBreaks(text: string, from: number): number {
    let at = from;
    for (; at < text.length; at++) {
      const c = text[at];
      if (c === '\n') this.line++;
      else if (c !== '\r' && c !== ' ' && c !== '\t') break;
    }
    return at;
  }

  private cut(): Segment[] {
    const { segment: terminator, element } = this.delimiters!;
    const segments: Segment[] = [];
    let at = 0;
    for (;;) {
      const start = this.skipBreaks(this.buffer, at);
      const end = this.buffer.indexOf(terminator, start);
      if (end < 0) {
        at = start;
        break;
      }
      const text = this.buffer.slice(start, end).replace(/\r$/, '');
      const line = this.line;
      for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', nl + 1)) this.line++;
      at = end + terminator.length;
      if (text === '') continue;
      const elements = text.split(element);
      const segment = { id: elements[0], elements, index: ++this.index, line };
      const unstorable = unstorableAt(text);
      if (unstorable >= 0)
        throw X12Error.at(segment, unstorableReason(segment, text, unstorable, element), this.delimiters);
      if (!/^[A-Z][A-Z0-9]{1,2}$/.test(segment.id))
        throw X12Error.at(segment, `"${segment.id.slice(0, 20)}" is not a segment id`, this.delimiters);
      segments.push(segment);
    }
    this.buffer = this.buffer.slice(at);
    if (this.buffer.length > MAX_SEGMENT_LENGTH) {
      throw new X12Error(
        `no segment terminator "${terminator}" in ${MAX_SEGMENT_LENGTH} characters: the terminator ISA declares is not the one the file uses`,
        {
          index: this.index + 1,
          line: this.line,
          segment: this.buffer.slice(0, 3),
        },
      );
    }
    return segments;
  }
}

/** Which element holds the character at `at` of the segment's text, and what the character is. */
function unstorableReason(segment: Segment, text: string, at: number, separator: string): string {
  const n = text.slice(0, at).split(separator).length - 1;
  const where = n === 0 ? 'the segment id' : `${segment.id}${String(n).padStart(2, '0')}`;
  return `${where} holds ${describeUnstorable(text, at)}, which is not text: the file is damaged or not X12`;
}

/** Element `n` of a segment, '' when absent (trailing empty elements are often left out). */
export function element(segment: Segment, n: number): string {
  return segment.elements[n] ?? '';
}

/** Element `n` split into its components. */
export function components(segment: Segment, n: number, delimiters: Delimiters): string[] {
  return element(segment, n).split(delimiters.component);
}
