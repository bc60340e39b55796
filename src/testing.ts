/** Helpers for testing code built on faultline: `import { ... } from 'faultline/testing'`. */
export { createVirtualClock } from './core/clock.js';
export type { VirtualClock, VirtualClockOptions } from './core/clock.js';
export { makeRecord, makeFailureRecord } from './record/fixture.js';
