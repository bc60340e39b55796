/**
 * One way every `--help` shows an option's default: `(default: 24h)`, at the end of the line.
 * Commander prints a string default JSON-quoted (`"24h"`) and an empty list as `[]`, and it can
 * only show a default the option really has; defaults that are computed at run time (the SQLite
 * path, a generated token, "now") are declared with {@link defaultShown} so they print the same way.
 */
import { Option, type Command } from 'commander';

/**
 * An option whose default is decided when the command runs: it parses as no value (the command
 * fills it in), and its help says `(default: <shown>)`.
 */
export function optionDefaultShown(flags: string, description: string, shown: string): Option {
  return new Option(flags, description).default(undefined, shown);
}

/** The text after `default:` for `option`, or undefined when it has none worth showing. */
function defaultText(option: Option): string | undefined {
  if (option.defaultValueDescription !== undefined) return option.defaultValueDescription;
  const value: unknown = option.defaultValue;
  // Commander hides the default of a plain boolean flag unless it is a boolean set on purpose.
  if (value === undefined || (!option.required && !option.optional && typeof value !== 'boolean')) return undefined;
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.join(', ');
  return String(value);
}

function describeOption(option: Option): string {
  const extra: string[] = [];
  if (option.argChoices !== undefined) extra.push(`one of: ${option.argChoices.join(', ')}`);
  const shown = defaultText(option);
  if (shown !== undefined) extra.push(`default: ${shown}`);
  if (option.envVar !== undefined) extra.push(`env: ${option.envVar}`);
  if (extra.length === 0) return option.description;
  const suffix = `(${extra.join(', ')})`;
  return option.description === '' ? suffix : `${option.description} ${suffix}`;
}

/** Gives `command` and every subcommand under it the one help format. */
export function useHelpFormat(command: Command): void {
  command.configureHelp({ optionDescription: describeOption });
  for (const sub of command.commands) useHelpFormat(sub);
}
