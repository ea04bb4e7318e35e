import { type JSONParser, TokenType } from '@streamparser/json';
import { JSON_LIMITS } from './parserLimits.js';

/**
 * Bounds on what a streaming JSON parser builds for one element (a value its caller selects,
 * hands over and drops: an entry of a Fitbit array, a device-b record). The parser builds each
 * element whole before handing it over, and its bytes alone do not bound its cost: 16 MiB of
 * `{},{},…` is five million objects, several hundred MiB of heap, and `[[[[…` is one stack frame
 * per byte. So each element is also bounded in tokens and every value in nesting depth
 * (parserLimits.ts). A bound crossed is reported through the parser's onError as a
 * JsonBoundError, so the caller ends the file as it does for invalid JSON, with this reason.
 */

export class JsonBoundError extends Error {}

export class JsonElementBounds {
  private depth = 0;
  private tokens = 0;
  private bytes = 0;

  constructor(
    parser: JSONParser,
    private readonly limits: { maxDepth: number; maxElementTokens: number; maxElementBytes: number } = JSON_LIMITS,
  ) {
    parser.onToken = ({ token }) => {
      if (token === TokenType.LEFT_BRACE || token === TokenType.LEFT_BRACKET) {
        if (++this.depth > limits.maxDepth) throw new JsonBoundError(`values nested deeper than ${limits.maxDepth}`);
      } else if (token === TokenType.RIGHT_BRACE || token === TokenType.RIGHT_BRACKET) this.depth--;
      if (++this.tokens > limits.maxElementTokens) throw new JsonBoundError(`an element of more than ${limits.maxElementTokens} JSON tokens`);
    };
  }

  /** Bytes about to be written. */
  fed(bytes: number): void {
    this.bytes += bytes;
  }

  /** Why the element being read is refused for its size so far, or null (asked after each write). */
  tooLarge(): string | null {
    return this.bytes > this.limits.maxElementBytes ? `an element larger than ${this.limits.maxElementBytes} bytes` : null;
  }

  /** The caller handed an element over and dropped it. */
  elementDone(): void {
    this.tokens = 0;
    this.bytes = 0;
  }
}
