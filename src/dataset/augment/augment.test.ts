import { describe, expect, it } from 'vitest';
import type { Trajectory } from '../../core/trajectory-types.js';
import { exportDataset } from '../export-dataset.js';
import { FewShotCollector } from '../few-shot-exporter.js';
import type { Split } from '../split.js';
import { augmentTrajectory, AUGMENT_KINDS, isAugmentable, variantsOf } from './augment.js';
import { weatherTrajectory } from './augment.test-helpers.js';
import { domainMapping } from './domain.js';
import { perturbSettings } from './perturb.js';
import { renameMaps } from './rename.js';
import { DOMAINS } from './vocabulary.js';

/** What makes the failure pattern, step by step: it must survive every kind of variant. */
const pattern = (t: Trajectory) => ({
  outcome: t.final_outcome,
  steps: t.steps.map((s) => [s.step_index, s.status, s.failure_type, s.failure_subtype, s.failure_category, s.failure_stage, s.failure_kind, s.response.status_code, s.response.error_code, s.agent_decision.action, s.agent_decision.wait_seconds, s.decision_correctness, s.correct_action?.action ?? null]),
  labels: t.labels?.map((l) => [l.name, l.step_index, l.confidence]),
  summary: t.failure_summary,
});

const DAY_MS = 86_400_000;

describe('augmentation', () => {
  const original = weatherTrajectory();

  it('keeps the failure pattern in every kind and tags the variant with its source', () => {
    for (const kind of AUGMENT_KINDS) {
      const v = augmentTrajectory(original, kind, 7, 1);
      expect(pattern(v), kind).toEqual(pattern(original));
      expect(v.metadata).toMatchObject({ source: 'augmented', human_verified: false, annotator: 'faultline-backtrace' });
      expect(v.metadata.augmentation).toMatchObject({ source_trajectory_id: 'traj_aug_1', source_source: 'faultline', kind, seed: 7, variant: 1 });
      expect(v.source_id).toBe(`traj_aug_1:${kind}:7:1`);
      expect(v.trajectory_id).toMatch(/^traj_[0-9a-f]{24}$/);
      expect(v.steps.some((s) => s.source_ref !== undefined)).toBe(false);
      expect(isAugmentable(v)).toBe(false);
    }
    expect(original.metadata.source).toBe('faultline');
  });

  it('is deterministic: same seed, byte-identical; another seed or variant, another trajectory', () => {
    for (const kind of AUGMENT_KINDS) {
      const a = JSON.stringify(augmentTrajectory(weatherTrajectory(), kind, 3, 1));
      expect(JSON.stringify(augmentTrajectory(weatherTrajectory(), kind, 3, 1))).toBe(a);
      const others = [augmentTrajectory(original, kind, 4, 1), augmentTrajectory(original, kind, 3, 2)].map((t) => JSON.stringify(t.steps) + t.task_description);
      expect(new Set([JSON.stringify(JSON.parse(a).steps) + JSON.parse(a).task_description, ...others]).size, kind).toBeGreaterThan(1);
    }
    const all = variantsOf(original, { kinds: AUGMENT_KINDS, variants: 2, seed: 0 });
    expect(all).toHaveLength(6);
    expect(new Set(all.map((t) => t.trajectory_id)).size).toBe(6);
  });

  it('rename: renames tools and fields consistently, no old tool name left anywhere', () => {
    for (let seed = 0; seed < 20; seed++) {
      const v = augmentTrajectory(original, 'rename', seed, 1);
      const { tools, keys } = renameMaps(original, seed, 1);
      const text = JSON.stringify({ ...v, metadata: { ...v.metadata, augmentation: undefined } });
      for (const old of ['get_weather', 'send_message']) expect(text, `seed ${seed}`).not.toContain(old);
      expect(v.steps.map((s) => s.tool_name)).toEqual(['get_weather', 'get_weather', 'get_weather', 'send_message'].map((n) => tools.get(n)));
      expect(new Set(v.steps.slice(0, 3).map((s) => s.tool_name)).size).toBe(1);
      // The same field has the same new name in every call, in the decision's delta and in the instruction.
      const city = keys.get('city')!;
      expect(city).not.toBe('city');
      for (const s of v.steps.slice(0, 3)) expect(Object.keys(s.input_params as object)).toContain(city);
      expect(Object.keys(v.steps[0]!.agent_decision.params_delta!)).toEqual([keys.get('date')]);
      expect(v.task_description).toContain(tools.get('get_weather'));
      expect(v.steps[0]!.response.message).toBe(`${tools.get('get_weather')}: ${keys.get('date')} 2026-13-45 is not a ${keys.get('date')}`);
      expect(v.labels![0]!.reason).toContain(tools.get('get_weather'));
      // Values are not touched.
      expect(v.steps[0]!.input_params).toMatchObject({ [city]: 'Paris', [keys.get('date')!]: '2026-13-45' });
    }
  });

  it('domain: maps tools by role and fields by kind onto another domain', () => {
    const seen = new Set<string>();
    for (let seed = 0; seed < 12; seed++) {
      const v = augmentTrajectory(original, 'domain', seed, 1);
      const { source, target, keys } = domainMapping(original, seed, 1);
      expect(source?.name).toBe('weather');
      expect(target.name).not.toBe('weather');
      seen.add(target.name);
      expect(v.metadata.domain).toBe(target.name);
      expect(v.metadata.augmentation!.target_domain).toBe(target.name);
      const text = JSON.stringify({ ...v, metadata: { ...v.metadata, augmentation: undefined } });
      expect(text).not.toContain('get_weather');
      // get_weather reads: the target's read tool; send_message creates.
      expect(v.steps[0]!.tool_name).toBe(target.tools.read);
      if (target.tools.create !== 'send_message') expect(v.steps[3]!.tool_name).toBe(target.tools.create);
      expect(target.fields.date).toContain(keys.get('date'));
      expect(target.fields.text).toContain(keys.get('city'));
      expect(target.fields.number).toContain(keys.get('days'));
      expect(v.task_description).not.toMatch(/\bweather\b/);
      expect(v.task_description).toContain(target.noun);
    }
    expect(seen.size).toBeGreaterThan(3);
    expect(DOMAINS).toHaveLength(9);
  });

  it('perturb: shifts dates by whole weeks everywhere, swaps entities and ids, keeps what the failure hinges on', () => {
    const v = augmentTrajectory(original, 'perturb', 11, 1);
    const { weeks } = perturbSettings(original, 11, 1);
    expect(Math.abs(weeks)).toBeGreaterThanOrEqual(2);
    const shift = (iso: string) => new Date(Date.parse(iso) + weeks * 7 * DAY_MS).toISOString();
    expect(v.created_at).toBe(shift(original.created_at));
    expect(v.steps.map((s) => s.started_at)).toEqual(original.steps.map((s) => shift(s.started_at!)));
    const newDate = shift('2026-03-30T00:00:00.000Z').slice(0, 10);
    const p = (i: number) => v.steps[i]!.input_params as Record<string, unknown>;
    expect(p(1)['date']).toBe(newDate);
    expect(v.steps[0]!.agent_decision.params_delta).toEqual({ date: newDate });
    expect(v.task_description).toContain(newDate);
    expect(new Date(`${newDate}T00:00:00Z`).getUTCDay()).toBe(new Date('2026-03-30T00:00:00Z').getUTCDay());
    // The invalid date stays invalid, in the call and in the error that quotes it.
    expect(p(0)['date']).toBe('2026-13-45');
    expect(v.steps[0]!.response.message).toBe('get_weather: date 2026-13-45 is not a date');
    // One city, swapped the same way everywhere.
    const city = p(0)['city'] as string;
    expect(city).not.toBe('Paris');
    expect(v.steps.slice(0, 3).map((s) => (s.input_params as Record<string, unknown>)['city'])).toEqual([city, city, city]);
    expect(v.task_description).toContain(city);
    expect((v.steps[2]!.response.body as Record<string, unknown>)['city']).toBe(city);
    expect(p(3)['text']).toBe(`${city}: 12.5C on ${newDate}`);
    expect(JSON.stringify(v)).not.toContain('Paris');
    // Ids get other digits; numbers scale unless a text quotes them or they are tiny.
    expect(p(3)['ref']).toMatch(/^ORD-\d{4}$/);
    expect(p(3)['ref']).not.toBe('ORD-1001');
    expect(p(3)['limit']).not.toBe(140);
    expect(p(3)['limit']).toBeGreaterThanOrEqual(112);
    expect(p(3)['limit']).toBeLessThanOrEqual(175);
    expect((v.steps[2]!.response.body as Record<string, unknown>)['temp_c']).toBe(12.5);
    expect(p(0)['days']).toBe(3);
    // Tool names are untouched by perturbation.
    expect(v.steps.map((s) => s.tool_name)).toEqual(original.steps.map((s) => s.tool_name));
  });

  it('never renames a field onto another field of the same object', () => {
    const t = weatherTrajectory('traj_clash');
    // `town` is what rename may make of `city`, `region` what domain may make of it.
    t.steps[0]!.input_params = { city: 'Paris', town: 'Montmartre', date: '2026-13-45', days: 3, unit: 'celsius' };
    t.steps[2]!.response.body = { city: 'Paris', region: 'EU', location: 'FR', place: 'x' };
    for (let seed = 0; seed < 30; seed++) {
      for (const kind of ['rename', 'domain'] as const) {
        const v = augmentTrajectory(t, kind, seed, 1);
        expect(Object.keys(v.steps[0]!.input_params as object), `${kind} ${seed}`).toHaveLength(5);
        expect(Object.keys(v.steps[2]!.response.body as object), `${kind} ${seed}`).toHaveLength(4);
      }
    }
  });

  it('only failure trajectories are augmented', () => {
    const ok = weatherTrajectory('traj_ok');
    ok.steps = ok.steps.slice(2);
    expect(isAugmentable(ok)).toBe(false);
    expect(variantsOf(ok, { kinds: AUGMENT_KINDS, variants: 1, seed: 0 })).toEqual([]);
  });

  it('variants land on their source trajectory\'s side of the split, and few-shot does not count them', async () => {
    const originals = Array.from({ length: 30 }, (_, i) => weatherTrajectory(`traj_src_${i}`));
    const all = originals.flatMap((t) => [t, ...variantsOf(t, { kinds: AUGMENT_KINDS, variants: 1, seed: 0 })]);
    const side = new Map<string, Split>();
    await exportDataset({
      format: 'trajectories', trajectories: all, seed: 1, valFraction: 0.5, files: { train: 't', validation: 'v' },
      write: (split, line) => void side.set((JSON.parse(line) as Trajectory).trajectory_id, split),
    });
    expect(new Set(side.values())).toEqual(new Set(['train', 'validation']));
    for (const t of all) expect(side.get(t.trajectory_id)).toBe(side.get(t.metadata.augmentation?.source_trajectory_id ?? t.trajectory_id));
    const few = new FewShotCollector();
    expect(few.add(all[1]!)).toBe('augmented (few-shot ranks observed failures)');
  });
});
