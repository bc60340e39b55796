/** Shared by the tests that need the real Redis (shared breakers, `faultline breakers`). */
import { Redis } from 'ioredis';

export const REDIS_URL = process.env['FAULTLINE_TEST_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/**
 * Whether Redis answers at REDIS_URL. Under CI it must: there a missing Redis fails the run
 * instead of skipping the tests (`.ci/run` starts it).
 */
export async function redisForTests(): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  probe.on('error', () => undefined);
  let answers = false;
  try {
    await probe.connect();
    answers = (await probe.ping()) === 'PONG';
  } catch {
    answers = false;
  } finally {
    probe.disconnect();
  }
  if (!answers && process.env['CI'] === 'true') throw new Error(`Redis is not answering at ${REDIS_URL}; CI must run these tests`);
  if (!answers) console.warn(`skipping the tests that need Redis: nothing answers at ${REDIS_URL}`);
  return answers;
}
