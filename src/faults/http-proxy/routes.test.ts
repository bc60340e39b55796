import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../core/errors.js';
import { compileRoutes, isIdSegment, loadRoutes, normalizePath, parseRoutes } from './routes.js';
import { YAML_ALIAS_BOMB } from '../../io/yaml-alias-bomb.test-helpers.js';

const dir = mkdtempSync(join(tmpdir(), 'faultline-routes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('proxy routes', () => {
  it('names POST /tools/<name> by the name, and everything else by method and normalized path', () => {
    const table = compileRoutes();
    expect(table.resolve('POST', '/tools/get_weather')).toEqual({ toolName: 'get_weather', route: 'POST /tools/:name', params: {}, idempotent: false });
    expect(table.resolve('post', '/tools/send%20mail').toolName).toBe('send mail');
    expect(table.resolve('GET', '/tools/get_weather').toolName).toBe('GET /tools/get_weather');
    expect(table.resolve('GET', '/v1/orders/ORD-10041/items/')).toMatchObject({ toolName: 'GET /v1/orders/:id/items', route: 'METHOD /path', idempotent: true });
    expect(table.resolve('DELETE', '/files/42').idempotent).toBe(true);
    expect(table.resolve('PATCH', '/files/42').idempotent).toBe(false);
  });

  it('replaces identifiers but keeps words that contain a digit or two', () => {
    const ids = ['42', '3f2504e0-4f89-11d3-9a0c-0305e82c3301', '507f1f77bcf86cd799439011', 'ORD-10041', 'cus_123abc', '2026-03-29', 'AbCdEfGh1JkLmNoPqR'];
    const words = ['v1', 'v2beta', 'oauth2', 's3', 'orders', 'ec2-instances', 'tools'];
    expect(ids.filter((s) => !isIdSegment(s))).toEqual([]);
    expect(words.filter((s) => isIdSegment(s))).toEqual([]);
    expect(normalizePath('//api/v2/users/1234/avatar.png')).toBe('/api/v2/users/:id/avatar.png');
    expect(normalizePath('/')).toBe('/');
  });

  it('tries configured routes first, in order, with captured parameters, wildcards and overrides', () => {
    const table = compileRoutes([
      { match: 'GET /v1/weather', tool: 'get_weather' },
      { match: 'POST /api/:service/:action', tool: '{service}.{action}' },
      { match: '* /orders/:order_id', tool: 'order', idempotent: false },
      { match: 'GET /static/**', tool: 'static_files' },
      { match: 'GET /v1/*/status', tool: 'status' },
    ]);
    expect(table.resolve('GET', '/v1/weather')).toEqual({ toolName: 'get_weather', route: 'GET /v1/weather', params: {}, idempotent: true });
    expect(table.resolve('POST', '/v1/weather').toolName).toBe('POST /v1/weather');
    expect(table.resolve('POST', '/api/billing/refund').toolName).toBe('billing.refund');
    expect(table.resolve('GET', '/orders/ORD-1')).toEqual({ toolName: 'order', route: '* /orders/:order_id', params: { order_id: 'ORD-1' }, idempotent: false });
    expect(table.resolve('GET', '/static').toolName).toBe('static_files');
    expect(table.resolve('GET', '/static/css/site.css').toolName).toBe('static_files');
    expect(table.resolve('GET', '/v1/payments/status').toolName).toBe('status');
    expect(table.resolve('GET', '/v1/payments/other').toolName).toBe('GET /v1/payments/other');
  });

  it('rejects bad routes with one line naming the route', () => {
    expect(() => compileRoutes([{ match: '/no-method', tool: 'x' }])).toThrow('routes: routes[0].match: expected "METHOD /path"');
    expect(() => compileRoutes([{ match: 'GET /a/:id', tool: '{name}' }])).toThrow('routes: routes[0].tool: {name} is not a parameter of "GET /a/:id"');
    expect(() => compileRoutes([{ match: 'GET /a/**/b', tool: 'x' }])).toThrow('"**" may only be the last segment');
    expect(() => compileRoutes([{ match: 'GET /a/:id/:id', tool: 'x' }])).toThrow('parameter :id appears twice');
    expect(() => compileRoutes([{ match: 'GET /a', tool: ' ' }])).toThrow('routes[0].tool: must be a non-empty string');
  });

  it('parses a list or a mapping from YAML, and reports file problems in one line', async () => {
    const list = parseRoutes('routes:\n  - match: GET /v1/weather\n    tool: get_weather\n    idempotent: true\n');
    expect(list).toEqual([{ match: 'GET /v1/weather', tool: 'get_weather', idempotent: true }]);
    expect(parseRoutes('"POST /tools/:name": "{name}"\n"GET /v1/weather": get_weather\n')).toEqual([
      { match: 'POST /tools/:name', tool: '{name}' },
      { match: 'GET /v1/weather', tool: 'get_weather' },
    ]);
    expect(() => parseRoutes('routes:\n  - match: GET /a\n    tool: a\n    method: GET\n', 'r.yaml')).toThrow('r.yaml: routes[0]: unknown field "method"');
    expect(() => parseRoutes('routes: [a', 'r.yaml')).toThrow(/^r\.yaml: invalid YAML at line 1/);
    expect(() => parseRoutes('42', 'r.yaml')).toThrow('r.yaml: expected a list of routes');
    expect(() => parseRoutes(YAML_ALIAS_BOMB, 'r.yaml')).toThrow(ConfigError);
    expect(() => parseRoutes(YAML_ALIAS_BOMB, 'r.yaml')).toThrow(/^r\.yaml: invalid YAML: Excessive alias count indicates a resource exhaustion attack$/);
    const file = join(dir, 'routes.yaml');
    writeFileSync(file, 'routes:\n  - { match: "GET /v1/weather", tool: get_weather }\n');
    expect(await loadRoutes(file)).toEqual([{ match: 'GET /v1/weather', tool: 'get_weather' }]);
    await expect(loadRoutes(join(dir, 'missing.yaml'))).rejects.toThrow(/^cannot read routes .*missing\.yaml: no such file or directory$/);
  });
});
