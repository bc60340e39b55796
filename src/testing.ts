/** Helpers for testing code built on faultline: `import { ... } from 'faultline/testing'`. */
export { createVirtualClock } from './runtime/clock.js';
export type { VirtualClock, VirtualClockOptions } from './runtime/clock.js';
export { makeRecord, makeFailureRecord } from './record/fixture.js';
