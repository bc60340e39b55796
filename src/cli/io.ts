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

export function writeLine(stream: NodeJS.WritableStream, line = ''): void {
  stream.write(`${line}\n`);
}

/** What a command factory gets: the io, and a place to put a non-zero exit code ("found what it reports"). */
export interface CliContext {
  io: CliIo;
  exitCode: number;
}
