/** `faultline/redis`: circuit breakers shared between processes through Redis (peer: `ioredis`). */
export { createRedisBreakers } from './runtime/redis-breakers.js';
export type { RedisBreakers, RedisBreakersOptions, SharedBreakerState } from './runtime/redis-breakers.js';
