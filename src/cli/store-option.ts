/** The `--db` option every command that reads or writes records shares, worded by what it does there. */
import type { Option } from 'commander';
import { DEFAULT_SQLITE_PATH } from '../store/open-store.js';
import { optionDefaultShown } from './help-format.js';

/** `--db <store>`: `purpose` says what the command does with it ("store to read", ...). */
export function storeOption(purpose: string): Option {
  return optionDefaultShown('--db <store>', `${purpose}: a SQLite path or a postgres:// URL (?schema=NAME)`, DEFAULT_SQLITE_PATH);
}
