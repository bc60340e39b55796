import { describe, expect, it } from 'vitest';
import { createToolCatalog, type CatalogSnapshot } from '../tools/index.js';
import { checkState, evaluateOracle, extraWrites, fileVersions } from './oracle.js';

function snapshots(): { before: CatalogSnapshot; after: CatalogSnapshot } {
  const { state } = createToolCatalog({ seed: 1 });
  return { before: state.snapshot(), after: state.snapshot() };
}

const completed = (answer: string) => ({ status: 'completed' as const, answer, diagnoses: [] });

describe('evaluateOracle', () => {
  it('checks the status and the answer, ignoring case', () => {
    const { before, after } = snapshots();
    const versions = fileVersions(before);
    const oracle = { status: ['completed' as const], answer_contains: ['Sunny', '2026-03-30'], answer_excludes: ['2026-03-29'] };
    expect(evaluateOracle(oracle, completed('SUNNY on 2026-03-30'), after, versions)).toEqual({ passed: true, failures: [] });
    expect(evaluateOracle(oracle, completed('sunny on 2026-03-29'), after, versions).failures).toEqual([
      'the answer does not mention "2026-03-30"',
      'the answer mentions "2026-03-29"',
    ]);
    expect(evaluateOracle(oracle, { status: 'gave_up', answer: 'sunny 2026-03-30', diagnoses: [] }, after, versions).failures).toEqual(['status gave_up is not one of completed']);
    expect(evaluateOracle(oracle, { status: 'error', answer: 'sunny 2026-03-30', diagnoses: [] }, after, versions).passed).toBe(false);
  });

  it('state checks count only what the run created', () => {
    const { before, after } = snapshots();
    const versions = fileVersions(before);
    const seeded = after.orders[0]!;
    // Nothing created yet: a seeded order matching the filter does not count.
    expect(checkState({ collection: 'orders', where: { customer_id: seeded.customer_id } }, after, versions)).toMatch(/found none/);
    after.orders.push({ ...seeded, order_id: 'ORD-99999', source: 'tool' });
    expect(checkState({ collection: 'orders', where: { customer_id: seeded.customer_id } }, after, versions)).toBeUndefined();
    expect(checkState({ collection: 'orders', count: 1 }, after, versions)).toBeUndefined();
    expect(checkState({ collection: 'orders', max: 0 }, after, versions)).toMatch(/at most 0 orders, found 1/);
    expect(checkState({ collection: 'orders', min: 2 }, after, versions)).toMatch(/at least 2 orders, found 1/);
    expect(checkState({ collection: 'messages', count: 0 }, after, versions)).toBeUndefined();
  });

  it('a file counts when the run wrote it: new, or a new version', () => {
    const { before, after } = snapshots();
    const versions = fileVersions(before);
    expect(checkState({ collection: 'files', count: 0 }, after, versions)).toBeUndefined();
    const existing = after.files[0]!;
    existing.version += 1;
    after.files.push({ ...existing, path: '/notes/new.md', version: 1 });
    expect(checkState({ collection: 'files', count: 2 }, after, versions)).toBeUndefined();
    expect(checkState({ collection: 'files', where: { path: '/notes/new.md' }, count: 1 }, after, versions)).toBeUndefined();
  });

  it('a write the checks do not ask for fails the oracle, though it duplicates nothing', () => {
    const { before, after } = snapshots();
    const versions = fileVersions(before);
    const seeded = after.messages[0]!;
    const post = (text: string) => after.messages.push({ ...seeded, message_id: `MSG-9${after.messages.length}`, channel: 'general', text, source: 'tool' });
    const oracle = { status: ['completed' as const], state: [{ collection: 'messages' as const, where: { channel: 'general', text: 'Office closed on Friday.' }, count: 1 }] };
    post('Office closed on Friday.');
    expect(evaluateOracle(oracle, completed('done'), after, versions)).toEqual({ passed: true, failures: [] });
    post('Office closed on Friday. (resent)');
    expect(evaluateOracle(oracle, completed('done'), after, versions).failures).toEqual(['created 2 messages during the run; the task asks for 1']);
    // Two checks on a collection allow their sum; a check with no upper bound allows any number.
    const two = [...oracle.state, { collection: 'messages' as const, where: { channel: 'general' }, count: 1 }];
    expect(extraWrites(two, after, versions)).toEqual([]);
    expect(extraWrites([{ collection: 'messages', min: 1 }], after, versions)).toEqual([]);
    expect(extraWrites([{ collection: 'messages', max: 1 }, { collection: 'orders', count: 0 }], after, versions)).toEqual(['created 2 messages during the run; the task asks for 1']);
  });
});
