import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { ScenarioError, loadScenarios, parseScenario } from './scenario-loader.js';
import { YAML_ALIAS_BOMB } from '../io/yaml-alias-bomb.test-helpers.js';
import { runCapture } from '../cli/run-cli.test-helpers.js';

const VALID = `
title: weather times out once
language: en
kind: single_step
taxonomy: { category: network, subtype: timeout }
dimensions: [identification, recovery, loop_avoidance]
recoverable: true
instruction: What's the weather in Shanghai tomorrow?
tools: [get_weather]
faults:
  - { tool: get_weather, trigger: first_call_only, fault: timeout, params: { delay_ms: 1000 } }
oracle:
  status: [completed]
  answer_contains: ['2026-03-30']
  diagnosis: { tool: get_weather, category: network }
`;

function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
  } catch (error) {
    if (error instanceof ScenarioError) return error.problems;
    throw error;
  }
  throw new Error('expected a ScenarioError');
}

const edit = (from: string, to: string) => VALID.replace(from, to);

describe('parseScenario', () => {
  it('reads a scenario and fills in its id', () => {
    const s = parseScenario(VALID, 'weather/timeout.yaml', 'weather/timeout');
    expect(s).toMatchObject({ id: 'weather/timeout', language: 'en', tools: ['get_weather'], oracle: { status: ['completed'] } });
    expect(s.faults[0]).toMatchObject({ fault: 'timeout', params: { delay_ms: 1000 } });
  });

  it('keeps an id the file gives', () => {
    expect(parseScenario(`id: custom/one\n${VALID}`, 'x.yaml', 'x').id).toBe('custom/one');
  });

  it('names the file, the field and the problem on one line', () => {
    expect(problemsOf(() => parseScenario(edit('language: en', 'language: fr'), 'a.yaml', 'a'))).toEqual(['a.yaml: language: must be one of en, zh']);
    expect(problemsOf(() => parseScenario(edit('recoverable: true\n', ''), 'a.yaml', 'a'))).toEqual(['a.yaml: recoverable: is required']);
    expect(problemsOf(() => parseScenario(edit('kind: single_step', 'kind: single_step\nflavour: spicy'), 'a.yaml', 'a'))).toEqual(['a.yaml: flavour: unknown field']);
    expect(problemsOf(() => parseScenario(edit('status: [completed]', 'status: [done]'), 'a.yaml', 'a'))).toEqual(['a.yaml: oracle.status[0]: must be one of completed, gave_up, escalated']);
    expect(problemsOf(() => parseScenario(edit('subtype: timeout', 'subtype: flaky'), 'a.yaml', 'a'))[0]).toMatch(/^a\.yaml: taxonomy\.subtype: must be one of timeout, authz, 5xx/);
  });

  it('checks tools against the catalog and fault rules with the fault-plan validator', () => {
    expect(problemsOf(() => parseScenario(edit('tools: [get_weather]', 'tools: [get_wether]'), 'a.yaml', 'a'))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^a\.yaml: tools\[0\]: unknown tool "get_wether"/)]),
    );
    expect(problemsOf(() => parseScenario(edit('params: { delay_ms: 1000 }', 'params: { delay_ms: -5 }'), 'a.yaml', 'a'))).toEqual([
      'a.yaml: faults[0].params.delay_ms: must be a non-negative number of milliseconds',
    ]);
    expect(problemsOf(() => parseScenario(edit('fault: timeout', 'fault: explode'), 'a.yaml', 'a'))[0]).toMatch(/^a\.yaml: faults\[0\]\.fault: unknown fault kind "explode"/);
    expect(problemsOf(() => parseScenario(edit('{ tool: get_weather, trigger', '{ tool: send_message, trigger'), 'a.yaml', 'a'))).toEqual([
      'a.yaml: faults[0].tool: "send_message" matches none of the scenario\'s tools, so the fault never fires',
    ]);
  });

  it('refuses a dimension the scoring rules could score on nothing', () => {
    const unrecoverable = edit('dimensions: [identification, recovery, loop_avoidance]\nrecoverable: true', 'dimensions: [identification]\nrecoverable: false').replace('status: [completed]', 'status: [gave_up]');
    expect(problemsOf(() => parseScenario(unrecoverable, 'a.yaml', 'a'))).toEqual(['a.yaml: dimensions: an unrecoverable scenario must score loop_avoidance: that is where its oracle (how the agent stops) counts']);
    expect(problemsOf(() => parseScenario(edit('loop_avoidance]', 'loop_avoidance, idempotency_safety]'), 'a.yaml', 'a'))).toEqual([
      'a.yaml: dimensions: idempotency_safety needs a tool that writes non-idempotently (create_event, send_message, create_order, create_refund, ...)',
      'a.yaml: oracle.state: idempotency_safety needs a check that counts the write the task needs (count: 1)',
    ]);
    expect(problemsOf(() => parseScenario(edit('loop_avoidance]', 'loop_avoidance, semantic_verification]'), 'a.yaml', 'a'))).toEqual([
      'a.yaml: dimensions: semantic_verification is scored on a wrong 200, and no fault rule answers one (partial, empty, schema_drift, semantic_drift, stale)',
    ]);
  });

  it('checks what the schema cannot: recovery only when recoverable, a diagnosis when identification is scored, state checks', () => {
    expect(problemsOf(() => parseScenario(edit('recoverable: true', 'recoverable: false'), 'a.yaml', 'a'))).toEqual(['a.yaml: dimensions: recovery is scored only on recoverable scenarios']);
    expect(problemsOf(() => parseScenario(edit('  diagnosis: { tool: get_weather, category: network }\n', ''), 'a.yaml', 'a'))).toEqual([
      'a.yaml: oracle.diagnosis: is required when identification is scored',
    ]);
    expect(problemsOf(() => parseScenario(edit("answer_contains: ['2026-03-30']", 'state: [{ collection: orders, count: 1, min: 1 }]'), 'a.yaml', 'a'))).toEqual([
      'a.yaml: oracle.state[0]: give count, or min/max, not both',
    ]);
    expect(problemsOf(() => parseScenario(`now: yesterday\n${VALID}`, 'a.yaml', 'a'))).toEqual(['a.yaml: now: must be an ISO-8601 date-time']);
  });

  it('reports YAML syntax errors with their position', () => {
    expect(problemsOf(() => parseScenario('title: [unclosed\n', 'a.yaml', 'a'))[0]).toMatch(/^a\.yaml: invalid YAML at line \d+, column \d+/);
    expect(problemsOf(() => parseScenario('- just\n- a list\n', 'a.yaml', 'a'))).toEqual(['a.yaml: must be a mapping of scenario fields']);
  });

  it('refuses a YAML alias bomb with one problem, a ConfigError', () => {
    expect(() => parseScenario(YAML_ALIAS_BOMB, 'a.yaml', 'a')).toThrow(ConfigError);
    expect(problemsOf(() => parseScenario(YAML_ALIAS_BOMB, 'a.yaml', 'a'))).toEqual(['a.yaml: invalid YAML: Excessive alias count indicates a resource exhaustion attack']);
  });

  it('is a ConfigError, so the CLI prints one line and exits 2', () => {
    try {
      parseScenario(edit('language: en', 'language: fr'), 'a.yaml', 'a');
    } catch (error) {
      expect(ConfigError.isInstance(error)).toBe(true);
    }
  });
});

describe('loadScenarios', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'faultline-scenarios-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function put(path: string, text: string): Promise<void> {
    await mkdir(join(dir, path, '..'), { recursive: true });
    await writeFile(join(dir, path), text);
  }

  it('reads every YAML file under the directory, ids from their paths, sorted by id', async () => {
    await put('weather/b.yaml', VALID);
    await put('weather/a.yml', VALID);
    await put('orders/deep/c.yaml', edit('kind: single_step', 'kind: cascade'));
    await put('notes.txt', 'not a scenario');
    const scenarios = await loadScenarios(dir);
    expect(scenarios.map((s) => s.id)).toEqual(['orders/deep/c', 'weather/a', 'weather/b']);
  });

  it('filters by dimension, kind or id glob', async () => {
    await put('weather/a.yaml', VALID);
    await put('weather/b-zh.yaml', edit('language: en', 'language: zh').replace('dimensions: [identification, recovery, loop_avoidance]', 'dimensions: [identification, recovery]'));
    await put('orders/c.yaml', edit('kind: single_step', 'kind: cascade'));
    const ids = async (filter: string | string[]) => (await loadScenarios(dir, { filter })).map((s) => s.id);
    expect(await ids('loop_avoidance')).toEqual(['orders/c', 'weather/a']);
    expect(await ids('cascade')).toEqual(['orders/c']);
    expect(await ids('weather/*')).toEqual(['weather/a', 'weather/b-zh']);
    expect(await ids('*-zh')).toEqual(['weather/b-zh']);
    expect(await ids('cascade,*-zh')).toEqual(['orders/c', 'weather/b-zh']);
    expect(await ids(['nothing-matches'])).toEqual([]);
  });

  it('lists the problems of every file, and duplicate ids', async () => {
    await put('a.yaml', edit('language: en', 'language: fr'));
    await put('b.yaml', `id: same\n${VALID}`);
    await put('c.yaml', `id: same\n${VALID}`);
    const error = await loadScenarios(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ScenarioError);
    const problems = (error as ScenarioError).problems.map((p) => p.replace(dir, '<dir>'));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/a\.yaml: language: must be one of en, zh$/);
    expect(problems[1]).toMatch(/c\.yaml: id: duplicate scenario id "same" \(also .*b\.yaml\)$/);
    expect((error as ScenarioError).message).toMatch(/\(and 1 more problems\)$/);
  });

  it('says when the directory is missing or empty', async () => {
    // In the words the rest of the CLI uses, not errno codes.
    await expect(loadScenarios(join(dir, 'nope'))).rejects.toThrow(new ScenarioError([`cannot read scenario directory ${join(dir, 'nope')}: no such file or directory`]));
    await writeFile(join(dir, 'a-file'), 'not a directory\n');
    await expect(loadScenarios(join(dir, 'a-file'))).rejects.toThrow(new ScenarioError([`cannot read scenario directory ${join(dir, 'a-file')}: not a directory`]));
    await expect(loadScenarios(dir)).rejects.toThrow(/no scenario files/);
  });

  it('loads a scenario file linked into the suite, and names one it cannot read with the reason', async () => {
    await put('weather/a.yaml', VALID);
    const elsewhere = await mkdtemp(join(tmpdir(), 'faultline-linked-'));
    try {
      await writeFile(join(elsewhere, 'shared.yaml'), VALID);
      await symlink(join(elsewhere, 'shared.yaml'), join(dir, 'weather', 'linked.yaml'));
      expect((await loadScenarios(dir)).map((s) => s.id)).toEqual(['weather/a', 'weather/linked']);
      await symlink(join(elsewhere, 'gone.yaml'), join(dir, 'weather', 'dangling.yaml'));
      await mkdir(join(elsewhere, 'a-dir.yaml'));
      await symlink(join(elsewhere, 'a-dir.yaml'), join(dir, 'weather', 'dir.yaml'));
      const problems = await loadScenarios(dir).then(
        () => [],
        (e: unknown) => (e as ScenarioError).problems,
      );
      expect(problems).toEqual([
        `cannot read scenario file ${relative(process.cwd(), join(dir, 'weather', 'dangling.yaml'))}: no such file or directory`,
        `cannot read scenario file ${relative(process.cwd(), join(dir, 'weather', 'dir.yaml'))}: is a directory`,
      ]);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('names the directory under the suite, or the scenario file, that it cannot read', async (ctx) => {
    await put('weather/a.yaml', VALID);
    await put('locked/b.yaml', VALID);
    await chmod(join(dir, 'locked'), 0o000);
    try {
      // Root (with CAP_DAC_READ_SEARCH) reads it all the same: nothing to see there.
      const readable = (() => {
        try {
          readdirSync(join(dir, 'locked'));
          return true;
        } catch {
          return false;
        }
      })();
      if (readable) ctx.skip();
      await expect(loadScenarios(dir)).rejects.toThrow(new ScenarioError([`cannot read scenario directory ${join(dir, 'locked')}: permission denied`]));
      await chmod(join(dir, 'locked'), 0o755);
      await chmod(join(dir, 'locked', 'b.yaml'), 0o000);
      await expect(loadScenarios(dir)).rejects.toThrow(new ScenarioError([`cannot read scenario file ${relative(process.cwd(), join(dir, 'locked', 'b.yaml'))}: permission denied`]));
    } finally {
      await chmod(join(dir, 'locked'), 0o755);
    }
  });

  it('faultline bench --suite with a scenario file it cannot read: one line naming it, exit 2', async () => {
    await put('weather/a.yaml', VALID);
    await symlink(join(dir, 'gone.yaml'), join(dir, 'weather', 'dangling.yaml'));
    const run = await runCapture(['bench', '--suite', dir, '--db', join(dir, 'bench.db'), '--out', join(dir, 'out')], dir);
    expect(run).toEqual({ code: 2, stdout: '', stderr: `faultline: cannot read scenario file ${relative(process.cwd(), join(dir, 'weather', 'dangling.yaml'))}: no such file or directory\n` });
    expect(existsSync(join(dir, 'bench.db'))).toBe(false);
  });
});
