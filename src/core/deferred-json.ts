/**
 * JSON held in a string of a log (a tool call's arguments, a tool result), left unparsed until
 * something reads it. Parsing those inner documents costs about as much as parsing the log lines
 * themselves, and most of them no annotator ever looks at (the rules read the arguments and
 * results of failed calls and of the calls around them), so the parallel annotator's workers
 * import with `deferJson` and the annotators read values through {@link jsonValue}.
 *
 * `toJSON` makes a deferred value serialize as its value: `JSON.stringify`, `canonicalJson` and
 * `paramsHash` see the parsed value, so the `--out` lines and every id and hash are unchanged.
 */
export class DeferredJson {
  #text: string;
  #parse: (text: string) => unknown;
  #value: unknown;
  #parsed = false;

  constructor(text: string, parse: (text: string) => unknown) {
    this.#text = text;
    this.#parse = parse;
  }

  /** The JSON text, for a caller that can tell something from it without parsing. */
  get text(): string {
    return this.#text;
  }

  /** The value, parsed on first use (then kept). */
  get value(): unknown {
    if (!this.#parsed) {
      this.#value = this.#parse(this.#text);
      this.#parsed = true;
    }
    return this.#value;
  }

  toJSON(): unknown {
    return this.value;
  }
}

/** A step's `input_params` or `response.body` as a value, whether it was imported deferred or not. */
export const jsonValue = (value: unknown): unknown => (value instanceof DeferredJson ? value.value : value);
