import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { recovered } from '../../dataset/dataset.test-helpers.js';
import { weatherTrajectory } from '../../dataset/augment/augment.test-helpers.js';
import { augmentTrajectory } from '../../dataset/augment/augment.js';
import { startFakeModelServer, reply, type OpenAIRequestBody } from '../../llm/fake-model-server.test-helpers.js';
import { createMemoryStore } from '../../store/memory/memory-store.js';
import { createPostgresStore } from '../../store/postgres/postgres-store.js';
import { describePostgres, PG_URL, useTestSchema } from '../../store/postgres/test-server.test-helpers.js';
import { createSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { trajectory } from '../../annotate/trajectory.test-helpers.js';
import type { Trajectory } from '../../core/trajectory-types.js';
import { captureIo, runCapture } from '../run-cli.test-helpers.js';
import { runCli } from '../run-cli.js';
import type { AugmentSummary } from './augment.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-augment-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const success = (): Trajectory => ({ ...trajectory([{ tool: 'get_weather', params: { city: 'Oslo' } }], { outcome: 'success' }), trajectory_id: 'traj_ok', source_id: 'ok:1' });

async function stored(db: string): Promise<Trajectory[]> {
  const store = createSqliteStore({ path: db });
  try {
    return await store.queryTrajectories({ limit: 1000 });
  } finally {
    await store.close();
  }
}

async function run(args: readonly string[]) {
  const r = await runCapture(args, dir);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r;
}

describe('faultline augment', () => {
  const db = join(dir, 'aug.db');

  it('stores tagged variants of failure trajectories, deterministic and idempotent', async () => {
    const store = createSqliteStore({ path: db });
    await store.insertTrajectories([weatherTrajectory(), recovered(), success()]);
    await store.close();

    const first = await run(['augment', '--db', db, '--variants', '2', '--seed', '5']);
    expect(first.stdout).toBe('faultline augment: 2 failure trajectories of 3 read: 12 variants (rename 4, domain 4, perturb 4), 12 stored, 0 already stored\n');
    const all = await stored(db);
    const variants = all.filter((t) => t.metadata.source === 'augmented');
    expect(variants).toHaveLength(12);
    expect(new Set(variants.map((t) => t.metadata.augmentation!.source_trajectory_id))).toEqual(new Set(['traj_aug_1', 'traj_recovered']));
    // Stored exactly as the library makes them.
    const expected = augmentTrajectory(weatherTrajectory(), 'domain', 5, 2);
    expect(JSON.stringify(variants.find((t) => t.trajectory_id === expected.trajectory_id))).toBe(JSON.stringify(expected));

    // Again: nothing new, variants are not augmented themselves.
    const again = JSON.parse((await run(['augment', '--db', db, '--variants', '2', '--seed', '5', '--json'])).stdout) as AugmentSummary;
    expect(again).toMatchObject({ trajectories_read: 15, failure_trajectories: 2, variants: 12, stored: 0, already_stored: 12 });
    expect(await stored(db)).toHaveLength(15);

    // Another seed, one kind: new variants; the export card counts them under their source.
    await run(['augment', '--db', db, '--seed', '6', '--kinds', 'rename']);
    expect((await stored(db)).filter((t) => t.metadata.source === 'augmented')).toHaveLength(14);
    const card = JSON.parse((await run(['export', '--db', db, '--format', 'trajectories', '--out', 'all.jsonl', '--json', '--val-fraction', '0'])).stdout) as { by_source: Record<string, number> };
    expect(card.by_source).toEqual({ augmented: 14, faultline: 1, openai: 1, 'step-log': 1 });
  });

  it('works on a memory-backed store through the same library', async () => {
    const store = createMemoryStore();
    await store.insertTrajectories([weatherTrajectory()]);
    const variants = [augmentTrajectory(weatherTrajectory(), 'perturb', 1, 1)];
    expect(await store.insertTrajectories(variants)).toBe(1);
    expect(await store.insertTrajectories(variants)).toBe(0);
    expect(await store.countTrajectories({ source: 'augmented' })).toBe(1);
    await store.close();
  });

  it('--llm rewrites variants over an OpenAI-compatible endpoint and does not ask again for stored ones', async () => {
    const llmDb = join(dir, 'llm.db');
    const store = createSqliteStore({ path: llmDb });
    await store.insertTrajectories([weatherTrajectory()]);
    await store.close();
    const server = await startFakeModelServer({ apiKey: 'sk-cli-test-key-123456' });
    server.respondWith((request) => {
      const texts = JSON.parse((request.body as OpenAIRequestBody).messages[1]!.content!) as { instruction: string; messages: string[] };
      return reply.text(JSON.stringify({ instruction: `Reworded: ${texts.instruction}`, messages: texts.messages }));
    });
    try {
      const args = ['augment', '--db', llmDb, '--kinds', 'perturb', '--llm', 'gpt-test', '--base-url', server.openaiBaseUrl];
      const captured = captureIo(dir);
      captured.io.env = { OPENAI_API_KEY: 'sk-cli-test-key-123456' };
      expect(await runCli(args, captured.io)).toBe(0);
      expect(captured.stdout()).toContain('llm gpt-test: 1 rewritten, 0 given up, 1 requests');
      const variant = (await stored(llmDb)).find((t) => t.metadata.source === 'augmented')!;
      expect(variant.task_description).toMatch(/^Reworded: /);
      expect(variant.metadata.augmentation!.llm_model).toBe('gpt-test');

      const second = captureIo(dir);
      second.io.env = { OPENAI_API_KEY: 'sk-cli-test-key-123456' };
      expect(await runCli(args, second.io)).toBe(0);
      expect(second.stdout()).toContain('0 stored, 1 already stored');
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it('rejects bad flags with one line, exit 2, and stores nothing', async () => {
    const before = await stored(db);
    const files = readdirSync(dir).sort();
    for (const args of [
      ['augment', '--db', db, '--variants', '0'],
      ['augment', '--db', db, '--variants', 'two'],
      ['augment', '--db', db, '--seed', '-3'],
      ['augment', '--db', db, '--kinds', 'rename,shuffle'],
      ['augment', '--db', db, '--base-url', 'http://127.0.0.1:1/v1'],
      ['augment', '--db', db, '--llm', 'gpt-test'],
      ['augment', '--db', db, '--source', 'nope'],
      // A mistyped store: refused, not created empty (annotate and export too).
      ['augment', '--db', join(dir, 'typo.db')],
      ['annotate', '--db', join(dir, 'typo.db')],
      ['export', '--db', join(dir, 'typo.db'), '--format', 'sft', '--out', join(dir, 'typo-sft.jsonl')],
    ]) {
      const r = await runCapture(args, dir);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(r.stderr).toMatch(/^faultline: /);
    }
    expect(await stored(db)).toEqual(before);
    expect(readdirSync(dir).sort()).toEqual(files);
  });
});

const describePg = await describePostgres('the PostgreSQL augment test');

describePg('faultline augment on PostgreSQL', () => {
  const { schema, url } = useTestSchema('faultline_augment_test');

  it('stores the same variants as SQLite, once', async () => {
    const store = await createPostgresStore({ url: PG_URL, schema });
    await store.insertTrajectories([weatherTrajectory(), recovered()]);
    await store.close();
    expect((await run(['augment', '--db', url, '--seed', '5'])).stdout).toContain('6 stored, 0 already stored');
    expect((await run(['augment', '--db', url, '--seed', '5'])).stdout).toContain('0 stored, 6 already stored');
    const again = await createPostgresStore({ url: PG_URL, schema });
    const variants = await again.queryTrajectories({ source: 'augmented' });
    await again.close();
    // JSONB keeps the values, not the key order.
    const byId = (list: Trajectory[]) => [...list].sort((a, b) => (a.trajectory_id < b.trajectory_id ? -1 : 1));
    expect(byId(variants)).toEqual(byId([weatherTrajectory(), recovered()].flatMap((t) => (['rename', 'domain', 'perturb'] as const).map((k) => augmentTrajectory(t, k, 5, 1)))));
  });
});

