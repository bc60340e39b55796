/**
 * Warnings about the skipped lines of an input file (`import`, `annotate --input`), held back
 * until the file shows it is in the format asked for (its first trajectory): a file in another
 * format then ends in one error line instead of a warning per line before it, however long it is.
 * At most {@link HeldWarnings.LIMIT} are held; the lines skipped beyond that before the first
 * trajectory are counted, and said in one line when the held ones are written. After `release`,
 * warnings are written as they come.
 */
import { writeLine } from './io.js';

export class HeldWarnings {
  static readonly LIMIT = 1000;
  private held: string[] | undefined = [];
  private unshown = 0;

  /** `shown` names the input file in the line about the warnings not kept. */
  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly shown: string,
  ) {}

  add(line: string): void {
    if (this.held === undefined) return writeLine(this.stream, line);
    if (this.held.length < HeldWarnings.LIMIT) this.held.push(line);
    else this.unshown++;
  }

  /** Writes the held warnings (once); later ones go straight through. */
  release(): void {
    const held = this.held;
    if (held === undefined) return;
    this.held = undefined;
    for (const line of held) writeLine(this.stream, line);
    if (this.unshown > 0) writeLine(this.stream, `${this.shown}: ${this.unshown} more lines skipped before the first trajectory (not shown)`);
  }
}
