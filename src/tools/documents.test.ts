import { describe, expect, it } from 'vitest';
import { DEFAULT_CATALOG_NOW } from './catalog.js';
import { harness } from './catalog.test-helpers.js';
import { tokenize } from './documents.js';

interface Hit {
  id: string;
  title: string;
  project: string;
  created_at: string;
  date: string;
  score: number;
}

describe('tokenize', () => {
  it('splits words and turns Chinese runs into bigrams', () => {
    expect(tokenize('Project X meeting-notes')).toEqual(['project', 'x', 'meeting', 'notes']);
    expect(tokenize('项目X会议记录')).toEqual(['项目', 'x', '会议', '议记', '记录']);
  });
});

describe('search_documents', () => {
  it('ranks the best matches first by relevance', async () => {
    const r = await harness().ok('search_documents', { query: 'Project X meeting notes' });
    expect(r.sort_by).toBe('relevance');
    expect(r.total).toBeGreaterThan(10);
    const results: Hit[] = r.results;
    expect(results).toHaveLength(10);
    expect(results[0]!.project).toBe('Project X');
    expect(results[0]!.title).toMatch(/meeting notes/);
    for (let i = 1; i < results.length; i++) expect(results[i - 1]!.score).toBeGreaterThanOrEqual(results[i]!.score);
  });

  it('sorts by date when asked (accepting synonyms), which changes what comes first', async () => {
    const h = harness();
    const byDate = await h.ok('search_documents', { query: 'Project X meeting notes', sort_by: 'newest' });
    const byRelevance = await h.ok('search_documents', { query: 'Project X meeting notes' });
    expect(byDate.sort_by).toBe('date');
    const dates = (byDate.results as Hit[]).map((d) => d.created_at);
    expect([...dates].sort().reverse()).toEqual(dates);
    expect((byDate.results as Hit[]).map((d) => d.id)).not.toEqual((byRelevance.results as Hit[]).map((d) => d.id));
    const asc = await h.ok('search_documents', { query: 'Project X meeting notes', sort_by: 'date', order: 'ascending' });
    expect(asc.order).toBe('asc');
    const ascDates = (asc.results as Hit[]).map((d) => d.created_at);
    expect([...ascDates].sort()).toEqual(ascDates);
  });

  it('searches Chinese text', async () => {
    const r = await harness().ok('search_documents', { query: '项目X会议记录', date_from: '2026-03-01', date_to: '2026-03-29' });
    expect((r.results as Hit[])[0]!.project).toBe('Project X');
  });

  it('keeps to the date range, inclusive, in UTC days', async () => {
    const r = await harness().ok('search_documents', { query: 'meeting notes', date_from: '2026-02-01', date_to: '2026-02-28', limit: 50 });
    expect(r.total).toBeGreaterThan(0);
    for (const hit of r.results as Hit[]) {
      expect(hit.date >= '2026-02-01' && hit.date <= '2026-02-28').toBe(true);
      expect(hit.created_at.slice(0, 10)).toBe(hit.date);
    }
  });

  it('answers no_results for over-narrow filters, saying how many matches lie outside', async () => {
    const e = await harness().fail('search_documents', { query: 'Borealis postmortem crash rate', date_from: '2026-03-28', date_to: '2026-03-28' });
    expect(e).toMatchObject({ category: 'business', type: 'no_results', code: 'NO_RESULTS' });
    expect((e.body as { matches_outside_date_range: number }).matches_outside_date_range).toBeGreaterThan(0);
  });

  it('answers no_results when nothing matches at all', async () => {
    const e = await harness().fail('search_documents', { query: 'quantum submarine zebra' });
    expect(e.type).toBe('no_results');
    expect(e.body).toMatchObject({ matches_outside_date_range: 0 });
  });

  it('rejects an inverted date range and an offset past the results', async () => {
    const h = harness();
    const inverted = await h.fail('search_documents', { query: 'apollo', date_from: '2026-03-29', date_to: '2026-03-01' });
    expect(inverted).toMatchObject({ type: 'boundary_violation', code: 'INVALID_DATE_RANGE' });
    const all = await h.ok('search_documents', { query: 'apollo', limit: 1 });
    const past = await h.fail('search_documents', { query: 'apollo', offset: all.total });
    expect(past).toMatchObject({ type: 'boundary_violation', code: 'OFFSET_OUT_OF_RANGE' });
    expect(past.body).toMatchObject({ total: all.total });
    const last = await h.ok('search_documents', { query: 'apollo', offset: all.total - 1 });
    expect(last.results).toHaveLength(1);
  });

  it('pages without overlap', async () => {
    const h = harness();
    const first = await h.ok('search_documents', { query: 'helios', limit: 5 });
    const second = await h.ok('search_documents', { query: 'helios', limit: 5, offset: 5 });
    const ids = new Set([...(first.results as Hit[]), ...(second.results as Hit[])].map((d) => d.id));
    expect(ids.size).toBe(10);
  });

  it('does not show documents written after the virtual now', async () => {
    const now = await harness().ok('search_documents', { query: 'apollo', limit: 50 });
    const earlier = await harness({ clockStart: DEFAULT_CATALOG_NOW - 60 * 86_400_000 }).ok('search_documents', { query: 'apollo', limit: 50 });
    expect(earlier.total).toBeLessThan(now.total);
    for (const hit of earlier.results as Hit[]) expect(Date.parse(hit.created_at)).toBeLessThanOrEqual(DEFAULT_CATALOG_NOW - 60 * 86_400_000);
  });

  it('validates limits and sort values', async () => {
    const h = harness();
    expect((await h.fail('search_documents', { query: 'x', limit: 51 })).type).toBe('boundary_violation');
    expect((await h.fail('search_documents', { query: 'x', sort_by: 'popularity' })).type).toBe('enum_mismatch');
    expect((await h.fail('search_documents', { query: '' })).stage).toBe('param_validation');
  });
});
