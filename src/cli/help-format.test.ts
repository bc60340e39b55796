import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command, Option } from 'commander';
import { afterAll, describe, expect, it } from 'vitest';
import { optionDefaultShown, useHelpFormat } from './help-format.js';
import { runCapture } from './run-cli.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-help-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The names listed under "Commands:" in a help text, without `help`. */
function subcommands(help: string): string[] {
  const section = help.split(/^Commands:$/m)[1] ?? '';
  return [...section.matchAll(/^ {2}([a-z][a-z-]*)\b/gm)].map((m) => m[1] as string).filter((name) => name !== 'help');
}

/** The "Options:" section of a help text with its line wrapping undone. */
function optionsText(help: string): string {
  const section = (help.split(/^Options:$/m)[1] ?? '').split(/^Commands:$/m)[0] ?? '';
  return section.replace(/\s+/g, ' ');
}

async function helpOf(path: string[]): Promise<string> {
  const run = await runCapture([...path, '--help'], dir);
  expect(run.code, `${path.join(' ')} --help`).toBe(0);
  return run.stdout;
}

describe('--help defaults', () => {
  it('every command and subcommand offers --json and shows defaults one way: "(default: X)"', async () => {
    const root = await helpOf([]);
    const paths = subcommands(root).map((name) => [name]);
    let optionsSeen = 0;
    let defaultsSeen = 0;
    while (paths.length > 0) {
      const path = paths.shift() as string[];
      const help = await helpOf(path);
      const subs = subcommands(help);
      for (const sub of subs) paths.push([...path, sub]);
      const options = optionsText(help);
      optionsSeen += (options.match(/ --[a-z]/g) ?? []).length;
      const where = `faultline ${path.join(' ')} --help`;
      // Any mention of a default in an option's text is the one suffix form.
      expect(options.match(/\(default(?!: )|default [a-z0-9$.]|default: "|default: \[\]/gi), where).toBeNull();
      defaultsSeen += (options.match(/\(default: /g) ?? []).length;
      // Every command that does something reports it, and scripts read that as JSON; a command
      // that only groups others (`predictor` for `predictor train`) has nothing to report.
      if (subs.length === 0) expect(options, where).toContain('--json');
    }
    // The walk reached the commands' real options, not only the program's.
    expect(optionsSeen).toBeGreaterThan(100);
    expect(defaultsSeen).toBeGreaterThan(40);
  });

  it('renders a computed default like a literal one', () => {
    const command = new Command('x')
      .addOption(optionDefaultShown('--db <store>', 'where records go', '.faultline/faultline.db'))
      .option('--since <time>', 'window start', '24h')
      .option('--tag <t>', 'repeatable', (v: string, p: string[]) => [...p, v], [])
      .addOption(new Option('--mode <m>', 'how').choices(['raw', 'assisted']).default('raw'));
    useHelpFormat(command);
    const help = command.helpInformation().replace(/\s+/g, ' ');
    expect(help).toContain('where records go (default: .faultline/faultline.db)');
    expect(help).toContain('window start (default: 24h)');
    expect(help).toContain('--tag <t> repeatable --mode');
    expect(help).toContain('how (one of: raw, assisted, default: raw)');
    // A computed default parses as no value: the command decides it when it runs.
    command.parse([], { from: 'user' });
    expect(command.opts()).toEqual({ since: '24h', tag: [], mode: 'raw' });
  });
});
