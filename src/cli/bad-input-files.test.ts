/**
 * Every file the CLI reads, given as each kind of bad input: a FIFO (which blocks a plain read for
 * ever), YAML nested 100 000 levels deep (which overflows a recursive parser), bytes that are not
 * UTF-8, and an empty file. Each must end in one line on stderr and exit 2, with no stack trace,
 * and leave nothing behind (no store, no report, an --out file as it was).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCapture, writeStoreFile } from './run-cli.test-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'faultline-bad-input-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Kind = 'fifo' | 'deep' | 'utf8' | 'empty' | 'blank';

const DEEP_FLOW = '['.repeat(100_000) + ']'.repeat(100_000);

/** What a file of `kind` holds, for a file that would otherwise hold `valid`. */
function contents(kind: Exclude<Kind, 'fifo'>, valid: string, yamlKey: string): Buffer {
  switch (kind) {
    case 'deep':
      return Buffer.from(`${yamlKey}: ${DEEP_FLOW}\n`);
    case 'utf8':
      // A tool name with a Latin-1 byte in it: decoded leniently it would be a rule that never matches.
      return Buffer.concat([Buffer.from(valid.replace('TOOL', 'get_')), Buffer.from([0xe9, 0x0a])]);
    case 'empty':
      return Buffer.alloc(0);
    case 'blank':
      return Buffer.from('\n  \n\t\n');
  }
}

let caseNo = 0;
/** A fresh directory with `name` in it made as `kind`; returns the directory and the file's path. */
function makeFile(kind: Kind, name: string, valid: string, yamlKey = 'rules'): { dir: string; file: string } {
  const dir = join(root, `case-${++caseNo}`);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  if (kind === 'fifo') execFileSync('mkfifo', [file]);
  else writeFileSync(file, contents(kind, valid, yamlKey));
  return { dir, file };
}

const REASON: Record<Kind, RegExp> = {
  fifo: /is a FIFO \(named pipe\), not a regular file$/,
  deep: /nested more than 100 levels deep$/,
  utf8: /not valid UTF-8 \(line \d+\)$/,
  empty: /the file is empty$/,
  blank: /the file is empty$/,
};

const PLAN = 'version: 1\nrules:\n  - { tool: TOOLweather, fault: hang }\n';
const ROUTES = 'routes:\n  - { match: "GET /v1/weather", tool: TOOLweather }\n';
const ALERTS = 'timeouts:\n  TOOLweather: 2500\n';
const SCENARIO = 'id: x\ntitle: TOOLweather\n';
const CHAT = '{"messages":[{"role":"user","content":"TOOL"}]}\n';

interface Case {
  what: string;
  kinds: Kind[];
  /** The command line for a bad file at `file` in `dir`. */
  argv: (file: string, dir: string) => string[];
  name: string;
  valid: string;
  yamlKey?: string;
  /** What must not be there afterwards, relative to the case's directory. */
  leavesNo?: string[];
}

const YAML_KINDS: Kind[] = ['fifo', 'deep', 'utf8', 'empty', 'blank'];
const TEXT_KINDS: Kind[] = ['fifo', 'utf8', 'empty', 'blank'];
/** Logs to import or annotate are data, decoded as they stream (see README, "Bad input"). */
const LOG_KINDS: Kind[] = ['fifo', 'empty', 'blank'];

let store: string;
beforeAll(async () => {
  store = await writeStoreFile(join(root, 'store.db'), []);
});

const cases: Case[] = [
  { what: 'proxy --plan', kinds: YAML_KINDS, name: 'plan.yaml', valid: PLAN, argv: (f) => ['proxy', '--target', 'http://127.0.0.1:9', '--plan', f, '--db', 'p.db'], leavesNo: ['p.db'] },
  { what: 'proxy --plan (.json)', kinds: ['fifo', 'utf8', 'empty'], name: 'plan.json', valid: '{"version":1,"rules":[{"tool":"TOOLx","fault":"hang"}]}', argv: (f) => ['proxy', '--target', 'http://127.0.0.1:9', '--plan', f, '--db', 'p.db'], leavesNo: ['p.db'] },
  { what: 'proxy --routes', kinds: YAML_KINDS, name: 'routes.yaml', valid: ROUTES, yamlKey: 'routes', argv: (f) => ['proxy', '--target', 'http://127.0.0.1:9', '--routes', f, '--db', 'p.db'], leavesNo: ['p.db'] },
  { what: 'mcp-proxy --plan', kinds: YAML_KINDS, name: 'plan.yaml', valid: PLAN, argv: (f) => ['mcp-proxy', '--plan', f, '--db', 'm.db', '--', process.execPath, '-e', ''], leavesNo: ['m.db'] },
  { what: 'mock-tools --plan', kinds: YAML_KINDS, name: 'plan.yaml', valid: PLAN, argv: (f) => ['mock-tools', '--port', '0', '--plan', f] },
  { what: 'alerts --config', kinds: YAML_KINDS, name: 'alerts.yaml', valid: ALERTS, yamlKey: 'timeouts', argv: (f) => ['alerts', '--db', store, '--config', f] },
  { what: 'dashboard --config', kinds: YAML_KINDS, name: 'alerts.yaml', valid: ALERTS, yamlKey: 'timeouts', argv: (f) => ['dashboard', '--db', store, '--port', '0', '--config', f] },
  {
    what: 'bench --suite (a scenario file in it)',
    kinds: YAML_KINDS,
    name: 'broken.yaml',
    valid: SCENARIO,
    yamlKey: 'tools',
    argv: (_f, dir) => ['bench', '--suite', dir, '--db', join(dir, 'b.db'), '--out', join(dir, 'report')],
    leavesNo: ['b.db', 'report'],
  },
  { what: 'import <file>', kinds: LOG_KINDS, name: 'log.jsonl', valid: CHAT, argv: (f, dir) => ['import', f, '--format', 'openai', '--db', join(dir, 'i.db')], leavesNo: ['i.db'] },
  { what: 'import <file> (tau-bench)', kinds: LOG_KINDS, name: 'results.json', valid: '[]', argv: (f, dir) => ['import', f, '--format', 'tau-bench', '--db', join(dir, 'i.db')], leavesNo: ['i.db'] },
  { what: 'annotate --input', kinds: LOG_KINDS, name: 'log.jsonl', valid: CHAT, argv: (f) => ['annotate', '--input', f, '--format', 'openai'] },
  {
    what: 'annotate --judge-cache',
    kinds: ['fifo'],
    name: 'cache.jsonl',
    valid: '',
    argv: (f, dir) => ['annotate', '--judge', 'llm:some-model', '--judge-cache', f, '--input', join(dir, 'missing.jsonl'), '--format', 'openai'],
  },
  { what: 'bench compare <run>', kinds: TEXT_KINDS, name: 'results.json', valid: '{"suite":{}}', argv: (f) => ['bench', 'compare', f, f] },
  { what: 'bench --agent module:<file>', kinds: ['fifo', 'empty'], name: 'agent.js', valid: '', argv: (f, dir) => ['bench', '--agent', `module:${f}`, '--db', join(dir, 'b.db'), '--out', join(dir, 'report')], leavesNo: ['b.db', 'report'] },
  { what: 'stats --db', kinds: ['fifo'], name: 'store.db', valid: '', argv: (f) => ['stats', '--db', f] },
  { what: 'tail --db', kinds: ['fifo'], name: 'store.db', valid: '', argv: (f) => ['tail', '--db', f] },
];

describe('a bad file given to any command: one line, exit 2, nothing left behind', () => {
  for (const c of cases) {
    for (const kind of c.kinds) {
      it(`${c.what}: ${kind}`, { timeout: 60_000 }, async () => {
        const { dir, file } = makeFile(kind, c.name, c.valid, c.yamlKey);
        const run = await runCapture(c.argv(file, dir), dir);
        expect(run.code, run.stderr).toBe(2);
        const lines = run.stderr.split('\n').filter((line) => line !== '');
        expect(lines, run.stderr).toHaveLength(1);
        expect(lines[0]).toMatch(/^faultline: /);
        expect(lines[0]).not.toMatch(/internal error|\n\s+at /);
        // The judge cache is the one file that may be empty (it is the command's own state).
        if (c.what !== 'annotate --judge-cache' || kind === 'fifo') expect(lines[0]).toMatch(REASON[kind]);
        for (const left of c.leavesNo ?? []) expect(existsSync(join(dir, left)), left).toBe(false);
        expect(existsSync(join(dir, '.faultline')), '.faultline').toBe(false);
      });
    }
  }
});

describe('annotate --out is replaced only when the whole input was annotated', () => {
  it('leaves the file that was there as it was when the input turns out malformed after a first trajectory', async () => {
    const dir = join(root, 'out-kept');
    mkdirSync(dir, { recursive: true });
    const out = join(dir, 'annotated.jsonl');
    writeFileSync(out, 'the previous run\n');
    // A tau-bench file cut off after its first result: the first trajectory is annotated, then the document ends early.
    const input = join(dir, 'cut.json');
    writeFileSync(input, '[{"task_id": 1, "reward": 1, "traj": [{"role": "user", "content": "hi"}]}, {"task_id": 2, "reward": 0, "traj": [');
    const run = await runCapture(['annotate', '--input', input, '--format', 'tau-bench', '--out', out], dir);
    expect(run.code).toBe(2);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(readFileSync(out, 'utf8')).toBe('the previous run\n');
    expect(readdirSync(dir).sort()).toEqual(['annotated.jsonl', 'cut.json']);
  });

  it('replaces it once the input is read to its end', async () => {
    const dir = join(root, 'out-replaced');
    mkdirSync(dir, { recursive: true });
    const out = join(dir, 'annotated.jsonl');
    writeFileSync(out, 'the previous run\n');
    const input = join(dir, 'log.jsonl');
    writeFileSync(input, CHAT.replace('TOOL', 'hello'));
    const run = await runCapture(['annotate', '--input', input, '--format', 'openai', '--out', out], dir);
    expect(run.code, run.stderr).toBe(0);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toHaveProperty('trajectory_id');
  });
});
