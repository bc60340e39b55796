import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { describe, expect, it, vi } from 'vitest';
import { createVirtualClock } from '../../core/clock.js';
import { defineTool } from '../../runtime/define-tool.js';
import { createRedisBreakers } from '../../runtime/redis-breakers.js';
import { createRuntime } from '../../runtime/runtime.js';
import { HttpError } from '../../runtime/tool-errors.js';
import { REDIS_URL, redisForTests } from '../../runtime/redis.test-helpers.js';
import { runCapture } from '../run-cli.test-helpers.js';

const available = await redisForTests();

/** Opens the shared circuit of `flaky` and leaves `steady` closed, under a fresh prefix. */
async function fleetWithAnOpenCircuit(prefix: string): Promise<void> {
  const breakers = createRedisBreakers({ url: REDIS_URL, prefix });
  const tool = (name: string, fails: boolean) =>
    defineTool({ name, description: name, input: { type: 'object' }, idempotent: true, retry: { maxRetries: 0 }, breaker: { failureThreshold: 2, cooldownMs: 60_000 }, execute: () => {
      if (fails) throw new HttpError(503, 'down');
      return 'ok';
    } });
  const rt = createRuntime({ tools: [tool('flaky', true), tool('steady', false)], breakers, clock: createVirtualClock({ startMs: Date.now() }) });
  await breakers.ready();
  await rt.execute('steady', {});
  await rt.execute('flaky', {});
  await rt.execute('steady', {}); // reports nothing: it never failed
  await rt.execute('flaky', {});
  await rt.execute('flaky', {});
  await new Promise((resolve) => setTimeout(resolve, 50));
  await rt.close();
  await breakers.close();
}

describe.skipIf(!available)('faultline breakers (the real Redis)', () => {
  it('lists the shared circuits, exits 1 while one is open, and --reset closes it', async () => {
    const prefix = `faultline-cli-test-${randomUUID()}`;
    await fleetWithAnOpenCircuit(prefix);
    const listed = await runCapture(['breakers', '--redis', REDIS_URL, '--prefix', prefix], tmpdir());
    expect(listed.stderr).toBe('');
    expect(listed.code).toBe(1);
    expect(listed.stdout).toMatch(/flaky\s+open\s+0\s+\d{4}-\d\d-\d\dT[\d:.]+Z\s+1/);
    // A tool that never failed has no shared state to show.
    expect(listed.stdout).not.toContain('steady');

    const json = await runCapture(['breakers', '--redis', REDIS_URL, '--prefix', prefix, '--json'], tmpdir());
    expect(JSON.parse(json.stdout.trim())).toMatchObject({ tool: 'flaky', state: 'open', trips: 1, cooldown_ms: 60_000 });

    const reset = await runCapture(['breakers', '--redis', REDIS_URL, '--prefix', prefix, '--reset', 'flaky'], tmpdir());
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain('closed the shared circuit of flaky');
    expect(reset.stdout).toMatch(/flaky\s+closed\s+0/);
  });

  it('--reset of a tool without a shared circuit (a typo, another prefix) is one line and exit 2, naming the ones there', async () => {
    const prefix = `faultline-cli-test-${randomUUID()}`;
    await fleetWithAnOpenCircuit(prefix);
    const typo = await runCapture(['breakers', '--redis', REDIS_URL, '--prefix', prefix, '--reset', 'flakey'], tmpdir());
    expect(typo).toEqual({ code: 2, stdout: '', stderr: `faultline: no shared circuit of flakey under prefix "${prefix}" at ${REDIS_URL} (shared: flaky); nothing reset\n` });
    // The open circuit is still open.
    expect((await runCapture(['breakers', '--redis', REDIS_URL, '--prefix', prefix], tmpdir())).code).toBe(1);
    const empty = `empty-${randomUUID()}`;
    const none = await runCapture(['breakers', '--redis', REDIS_URL, '--prefix', empty, '--reset', 'flaky'], tmpdir());
    expect(none).toEqual({ code: 2, stdout: '', stderr: `faultline: no shared circuit of flaky under prefix "${empty}" at ${REDIS_URL} (none is shared there); nothing reset\n` });
  });

  it('says so when nothing is shared under the prefix', async () => {
    const r = await runCapture(['breakers', '--redis', REDIS_URL, '--prefix', `empty-${randomUUID()}`], tmpdir());
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('no shared circuits');
  });

  it('a database index the server does not have is one line and exit 2, not database 0', async () => {
    const url = new URL(REDIS_URL);
    url.pathname = '/99';
    const r = await runCapture(['breakers', '--redis', url.href, '--prefix', `empty-${randomUUID()}`], tmpdir());
    expect(r).toStrictEqual({ code: 2, stdout: '', stderr: `faultline: could not connect to Redis at ${url.href}: ERR DB index is out of range\n` });
  });

  it('masks the password of the URL it prints', async () => {
    // A server without a password lets ioredis go on after its AUTH, with a warning of its own.
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const url = new URL(REDIS_URL);
      url.password = 's3cret';
      const r = await runCapture(['breakers', '--redis', url.href, '--prefix', `empty-${randomUUID()}`], tmpdir());
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(r.stdout).toContain(`at ${url.href.replace(':s3cret@', ':***@')}`);
      expect(r.stdout).not.toContain('s3cret');
    } finally {
      warn.mockRestore();
    }
  });
});

describe('faultline breakers: bad input', () => {
  it('an unreachable Redis is one line and exit 2', async () => {
    const r = await runCapture(['breakers', '--redis', 'redis://127.0.0.1:1'], tmpdir());
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^faultline: could not connect to Redis at redis:\/\/127\.0\.0\.1:1: .*ECONNREFUSED[^\n]*\n$/);
  });

  it('masks the password of the URL in the error', async () => {
    const r = await runCapture(['breakers', '--redis', 'redis://user:s3cret@127.0.0.1:1'], tmpdir());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^faultline: could not connect to Redis at redis:\/\/user:\*\*\*@127\.0\.0\.1:1: .*ECONNREFUSED[^\n]*\n$/);
    const notRedis = await runCapture(['breakers', '--redis', 'http://user:s3cret@127.0.0.1:1'], tmpdir());
    expect(notRedis).toStrictEqual({ code: 2, stdout: '', stderr: 'faultline: --redis must be a redis:// or rediss:// URL, got "http://user:***@127.0.0.1:1"\n' });
  });

  it('a database index that is not a whole number is refused before connecting', async () => {
    for (const url of ['redis://127.0.0.1:1/abc', 'redis://127.0.0.1:1/?db=abc', 'redis://user:s3cret@127.0.0.1:1/-1']) {
      const r = await runCapture(['breakers', '--redis', url], tmpdir());
      const db = url.endsWith('abc') ? 'abc' : '-1';
      expect(r, url).toStrictEqual({
        code: 2,
        stdout: '',
        stderr: `faultline: invalid Redis URL ${url.replace(':s3cret@', ':***@')}: the database index must be a whole number (0-15 on a default server), got "${db}"\n`,
      });
    }
  });

  it('a URL that is not redis:// is refused before connecting', async () => {
    const r = await runCapture(['breakers', '--redis', 'http://127.0.0.1:6379'], tmpdir());
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^faultline: --redis must be a redis:\/\/ or rediss:\/\/ URL/);
  });
});
