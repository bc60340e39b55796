import { describe, expect, it } from 'vitest';
import { TraceSteps } from './trace-steps.js';

describe('TraceSteps', () => {
  it('counts the steps of each trace from 0', () => {
    const steps = new TraceSteps();
    expect([steps.take('a'), steps.take('a'), steps.take('b'), steps.take('a')]).toEqual([0, 1, 0, 2]);
  });

  it('forgets the trace used least recently, not a trace still running', () => {
    const steps = new TraceSteps(2);
    steps.take('old');
    steps.take('busy');
    steps.take('old'); // 'old' is now the most recent
    steps.take('new'); // forgets 'busy'
    expect(steps.take('old')).toBe(2);
    expect(steps.take('busy')).toBe(0);
  });
});
