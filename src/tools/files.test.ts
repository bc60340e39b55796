import { describe, expect, it } from 'vitest';
import { harness } from './catalog.test-helpers.js';

describe('write_file, read_file, list_files', () => {
  it('creates, reads back, and versions files', async () => {
    const h = harness();
    const created = await h.ok('write_file', { path: '/notes/plan.md', content: '# Plan\n' });
    expect(created).toMatchObject({ path: '/notes/plan.md', version: 1, size: 7, created: true, changed: true, updated_at: '2026-03-29T14:00:00.000Z' });
    expect(await h.ok('read_file', { path: '/notes/plan.md' })).toMatchObject({ content: '# Plan\n', version: 1 });
    await h.clock.advance(60_000);
    const updated = await h.ok('write_file', { path: '/notes/plan.md', content: '# Plan v2\n' });
    expect(updated).toMatchObject({ version: 2, created: false, changed: true, updated_at: '2026-03-29T14:01:00.000Z', created_at: '2026-03-29T14:00:00.000Z' });
  });

  it('is idempotent: writing the same content again changes nothing', async () => {
    const h = harness();
    await h.ok('write_file', { path: '/a.txt', content: 'same' });
    const again = await h.ok('write_file', { path: '/a.txt', content: 'same' });
    expect(again).toMatchObject({ version: 1, changed: false, created: false });
  });

  it('counts UTF-8 bytes', async () => {
    expect((await harness().ok('write_file', { path: '/zh.txt', content: '会议' })).size).toBe(6);
  });

  it('writes conditionally with if_version, answering 412 precondition_failed on mismatch', async () => {
    const h = harness();
    await h.ok('write_file', { path: '/c.txt', content: 'v1', if_version: 0 });
    const exists = await h.fail('write_file', { path: '/c.txt', content: 'again', if_version: 0 });
    expect(exists).toMatchObject({ type: 'precondition_failed', code: 'VERSION_MISMATCH' });
    expect(exists.body).toMatchObject({ current_version: 1, expected_version: 0 });
    expect((await h.ok('write_file', { path: '/c.txt', content: 'v2', if_version: 1 })).version).toBe(2);
    expect((await h.fail('write_file', { path: '/c.txt', content: 'v3', if_version: 1 })).body).toMatchObject({ current_version: 2 });
    expect((await h.ok('read_file', { path: '/c.txt' })).content).toBe('v2');
  });

  it('answers 403 forbidden under /system/ and rejects dot segments', async () => {
    const h = harness();
    expect(await h.fail('write_file', { path: '/system/config.json', content: '{}' })).toMatchObject({ category: 'auth', type: 'forbidden', status: 403 });
    expect((await h.ok('read_file', { path: '/system/config.json' })).content).toContain('retention_days');
    expect(await h.fail('write_file', { path: '/notes/../system/x', content: 'x' })).toMatchObject({ type: 'boundary_violation', code: 'INVALID_PATH' });
    expect((await h.fail('write_file', { path: 'relative.txt', content: 'x' })).stage).toBe('param_validation');
  });

  it('answers 404 not_found for missing files, listing what is there, and for directories', async () => {
    const h = harness();
    const missing = await h.fail('read_file', { path: '/notes/todo.md' });
    expect(missing).toMatchObject({ type: 'not_found', code: 'FILE_NOT_FOUND' });
    expect(missing.body).toMatchObject({ files_in_directory: ['/notes/project-x.md', '/notes/todo.txt'] });
    expect(await h.fail('read_file', { path: '/notes' })).toMatchObject({ type: 'not_found', code: 'IS_A_DIRECTORY' });
  });

  it('lists by prefix, sorted, without contents', async () => {
    const h = harness();
    const notes = await h.ok('list_files', { prefix: '/notes/' });
    expect(notes.files.map((f: { path: string }) => f.path)).toEqual(['/notes/project-x.md', '/notes/todo.txt']);
    expect(notes.files[0]).not.toHaveProperty('content');
    expect((await h.ok('list_files', {})).total).toBe(4);
    expect(await h.ok('list_files', { prefix: '/nothing/' })).toMatchObject({ total: 0, files: [] });
  });

  it('seeds a sales report consistent with query_sales_data', async () => {
    const h = harness();
    const report = (await h.ok('list_files', { prefix: '/reports/' })).files[0].path as string;
    expect(report).toBe('/reports/sales-south-2026-02.csv');
    const csv = (await h.ok('read_file', { path: report })).content as string;
    const sales = await h.ok('query_sales_data', { month: '2026-02', region: 'south' });
    const first = csv.split('\n')[1]!.split(',');
    expect(first[0]).toBe('2026-02-01');
    expect(Number(first[2])).toBeCloseTo(sales.data[0].revenue, 2);
    expect(Number(first[3])).toBe(sales.data[0].orders);
  });
});
