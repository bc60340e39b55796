/** The world a CLI command sees, injected so commands can be tested in-process. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Answers for interactive commands (`faultline review`): a terminal, or piped text. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Resolves when the command should stop (Ctrl-C), for long-running commands. */
  interrupted?: Promise<void>;
}

/**
 * Recorded text is whatever a tool or an upstream sent; control characters (ESC sequences that
 * clear the screen or retitle the window, BEL, C1 controls) are shown as `\xHH` instead, before
 * any of it reaches a terminal.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
}

export function writeLine(stream: NodeJS.WritableStream, line = ''): void {
  stream.write(`${line}\n`);
}

/** What a command factory gets: the io, and a place to put a non-zero exit code ("found what it reports"). */
export interface CliContext {
  io: CliIo;
  exitCode: number;
}
