/**
 * Every fault form on the MCP wire, against real servers from npm: what the client sees (a
 * JSON-RPC error with which code, or an isError result, late, or never), and what the record says
 * (classification and the fault as ground truth).
 */
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectNoPieceOf } from '../../record/secret-pieces.test-helpers.js';
import type { FaultRule } from '../plan-spec.js';
import { everythingUpstream, filesystemUpstream, rpcError, startTestProxy, tempDir, type TestProxy } from './mcp-proxy.test-helpers.js';

function text(result: CallToolResult): string {
  return result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
}

describe('fault forms through the MCP proxy (server-everything)', () => {
  let t: TestProxy;
  let count = 0;
  const useRule = (rule: FaultRule) => t.plan.update({ version: 1, rules: [rule] });
  /** The record of the next call, waited for (calls the client gave up on are recorded later). */
  const nextRecord = () => t.nthRecord(++count);

  beforeAll(async () => {
    t = await startTestProxy(everythingUpstream(), { version: 1, rules: [] });
    // Output schemas are cached by the SDK client on listTools; real clients list before calling.
    await t.client.listTools();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('http_status 400 -> JSON-RPC -32602, recorded as a parameter failure', async () => {
    useRule({ id: 'bad-args', tool: 'get-sum', fault: 'http_status', params: { status: 400, message: 'b must be positive' } });
    const error = await rpcError(t.client.callTool({ name: 'get-sum', arguments: { a: 1, b: -1 } }));
    expect(error.code).toBe(-32602);
    expect(error.message).toBe('MCP error -32602: b must be positive');
    expect(error.data).toMatchObject({ status: 400 });
    const record = await nextRecord();
    expect(record).toMatchObject({
      status: 'failure',
      failure_stage: 'param_validation',
      failure_category: 'parameter',
      failure_type: 'schema_mismatch',
      error_code: 'MCP_-32602',
      error_message: 'b must be positive',
      fault: { kind: 'http_status', rule_id: 'bad-args', transport: 'mcp', params: { status: 400 } },
      feedback: { action: 'retry_with_fixed_params' },
    });
    expect(record.attempts[0]!.fault_kind).toBe('http_status');
  });

  it('http_status 500 -> JSON-RPC -32603, recorded as an ambiguous server error', async () => {
    useRule({ id: 'boom', tool: 'echo', fault: 'http_status', params: { status: 500 } });
    const error = await rpcError(t.client.callTool({ name: 'echo', arguments: { message: 'x' } }));
    expect(error.code).toBe(-32603);
    const record = await nextRecord();
    expect(record).toMatchObject({ status: 'failure', failure_category: 'system', failure_type: 'server_error', error_code: 'MCP_-32603', idempotent: true });
    // Idempotent, so the ambiguity does not call for checking state first.
    expect(record.feedback?.action).not.toBe('verify_state');
  });

  it('http_status 429 -> an isError result with retry_after, recorded as rate limited with the wait', async () => {
    useRule({ id: 'slow-down', tool: 'echo', fault: 'http_status', params: { status: 429, retry_after: 7 } });
    const result = await t.client.callTool({ name: 'echo', arguments: { message: 'x' } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ status: 429, retry_after: 7 });
    expect(text(result as CallToolResult)).toContain('retry after 7 s');
    const record = await nextRecord();
    expect(record).toMatchObject({
      status: 'failure',
      failure_category: 'rate_limit',
      failure_type: 'rate_limited',
      error_code: 'HTTP_429',
      feedback: { action: 'wait_and_retry', retry_after_ms: 7000 },
      fault: { kind: 'http_status', rule_id: 'slow-down' },
    });
  });

  it('rate_limit_burst -> 429 isError results once the bucket is empty', async () => {
    useRule({ id: 'burst', tool: 'echo', fault: 'rate_limit_burst', params: { capacity: 1, refill_per_sec: 0.1 } });
    const first = await t.client.callTool({ name: 'echo', arguments: { message: 'one' } });
    const second = await t.client.callTool({ name: 'echo', arguments: { message: 'two' } });
    expect(first.isError).toBeUndefined();
    expect(second.isError).toBe(true);
    expect((second.structuredContent as { retry_after: number }).retry_after).toBeGreaterThanOrEqual(1);
    expect((await nextRecord()).status).toBe('success');
    expect(await nextRecord()).toMatchObject({ failure_type: 'rate_limited', fault: { kind: 'rate_limit_burst' } });
  });

  it('http_status 503 -> an isError result, recorded as dependency_down (not ambiguous)', async () => {
    useRule({ id: 'down', tool: 'echo', fault: 'http_status', params: { status: 503 } });
    const result = await t.client.callTool({ name: 'echo', arguments: { message: 'x' } });
    expect(result.isError).toBe(true);
    expect(await nextRecord()).toMatchObject({ failure_category: 'system', failure_type: 'dependency_down', error_code: 'HTTP_503' });
  });

  it('auth_expiry -> the calls after the limit get 401 isError results, recorded as credential_expired', async () => {
    useRule({ id: 'expiry', tool: 'get-sum', fault: 'auth_expiry', params: { after_calls: 1 } });
    const ok = await t.client.callTool({ name: 'get-sum', arguments: { a: 1, b: 1 } });
    const expired = await t.client.callTool({ name: 'get-sum', arguments: { a: 1, b: 1 } });
    expect(ok.isError).toBeUndefined();
    expect(expired.isError).toBe(true);
    expect(expired.structuredContent).toMatchObject({ status: 401, www_authenticate: expect.stringContaining('invalid_token') });
    expect((await nextRecord()).status).toBe('success');
    expect(await nextRecord()).toMatchObject({ failure_category: 'auth', failure_type: 'credential_expired', error_code: 'HTTP_401', feedback: { action: 'escalate_to_user' } });
  });

  it('an isError fault on a tool with an output schema carries no structuredContent, so the client does not reject it', async () => {
    useRule({ id: 'gone', tool: 'get-structured-content', fault: 'http_status', params: { status: 404 } });
    const result = await t.client.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(text(result as CallToolResult)).toContain('"status":404');
    expect(await nextRecord()).toMatchObject({ failure_category: 'business', failure_type: 'not_found', error_code: 'HTTP_404' });
  });

  it('connection_refused -> JSON-RPC -32000 with the errno, recorded as connection_refused', async () => {
    useRule({ id: 'refused', tool: 'echo', fault: 'connection_refused' });
    const error = await rpcError(t.client.callTool({ name: 'echo', arguments: { message: 'x' } }));
    expect(error.code).toBe(-32000);
    expect(error.data).toEqual({ code: 'ECONNREFUSED' });
    expect(await nextRecord()).toMatchObject({ failure_category: 'network', failure_type: 'connection_refused', error_code: 'ECONNREFUSED' });
  });

  it('connection_reset -> JSON-RPC -32000, recorded as an ambiguous reset', async () => {
    useRule({ id: 'reset', tool: 'toggle-subscriber-updates', fault: 'connection_reset', params: { commit: true } });
    const error = await rpcError(t.client.callTool({ name: 'toggle-subscriber-updates', arguments: {} }));
    expect(error.data).toEqual({ code: 'ECONNRESET' });
    const record = await nextRecord();
    expect(record).toMatchObject({ failure_type: 'connection_reset', error_code: 'ECONNRESET', idempotent: false });
    // The tool is not idempotent and may have run: check before calling again.
    expect(record.feedback?.action).toBe('verify_state');
    await t.client.callTool({ name: 'toggle-subscriber-updates', arguments: {} }).catch(() => undefined);
    count++;
  });

  it('latency -> the real answer, late', async () => {
    useRule({ id: 'slow', tool: 'echo', fault: 'latency', params: { ms: 300 } });
    const started = Date.now();
    const result = await t.client.callTool({ name: 'echo', arguments: { message: 'late' } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(result).toEqual({ content: [{ type: 'text', text: 'Echo: late' }] });
    const record = await nextRecord();
    expect(record).toMatchObject({ status: 'success', fault: { kind: 'latency', params: { ms: 300, delay_ms: 300 } } });
    expect(record.duration_ms).toBeGreaterThanOrEqual(290);
  });

  it('timeout with a delay -> JSON-RPC -32001 after the delay', async () => {
    useRule({ id: 'gateway', tool: 'echo', fault: 'timeout', params: { delay_ms: 200 } });
    const started = Date.now();
    const error = await rpcError(t.client.callTool({ name: 'echo', arguments: { message: 'x' } }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(error.code).toBe(-32001);
    expect(await nextRecord()).toMatchObject({ status: 'failure', failure_category: 'network', failure_type: 'timeout', error_code: 'MCP_-32001' });
  });

  it('hang -> no answer: the client request times out, and the record says timeout', async () => {
    useRule({ id: 'stuck', tool: 'echo', fault: 'hang' });
    const error = await rpcError(t.client.callTool({ name: 'echo', arguments: { message: 'x' } }, undefined, { timeout: 300 }));
    // The client's own timeout, not an answer from the proxy.
    expect(error.code).toBe(-32001);
    expect(error.data).toEqual({ timeout: 300 });
    const record = await nextRecord();
    expect(record).toMatchObject({ status: 'timeout', failure_type: 'timeout', error_code: 'TIMEOUT', fault: { kind: 'hang', rule_id: 'stuck' }, raw_output: null });
    expect(record.attempts[0]!.outcome).toBe('timeout');
    // The proxy's clock starts when the request reaches it, which on a loaded machine can be well
    // after the client's own 300 ms started; so only that the hang was held is checked here.
    expect(record.duration_ms).toBeGreaterThan(0);
  });

  it('malformed_json -> the result as one text block that is not JSON, without structuredContent', async () => {
    useRule({ id: 'garbled', tool: 'get-structured-content', fault: 'malformed_json' });
    // A raw request, to see exactly what was sent: an SDK client calling this tool rejects a result without structured content.
    const raw = await t.client.request({ method: 'tools/call', params: { name: 'get-structured-content', arguments: { location: 'Chicago' } } }, CallToolResultSchema);
    expect(raw.structuredContent).toBeUndefined();
    expect(raw.content).toHaveLength(1);
    expect(() => JSON.parse(text(raw))).toThrow(SyntaxError);
    // The JSON cut off half way, as a dropped connection truncates a body.
    expect(text(raw)).toBe('{"temperature":36,"conditions":"Li');
    const record = await nextRecord();
    // The tool declares an output schema, so an MCP client refuses this result: recorded as what it meets.
    expect(record).toMatchObject({
      status: 'failure',
      failure_stage: 'result_parse',
      failure_type: 'output_schema_mismatch',
      error_code: 'OUTPUT_SCHEMA_MISMATCH',
      fault: { kind: 'malformed_json', rule_id: 'garbled' },
    });
    expect(JSON.parse(record.raw_output ?? 'null')).toEqual([{ type: 'text', text: '{"temperature":36,"conditions":"Li' }]);

    const error = await rpcError(t.client.callTool({ name: 'get-structured-content', arguments: { location: 'Chicago' } }));
    expect(error.message).toContain('output schema but did not return structured content');
    count++;
  });

  it('partial and schema_drift rewrite the structured output and its JSON text alike', async () => {
    useRule({ id: 'cut', tool: 'get-structured-content', fault: 'partial', params: { drop_fields: ['humidity'] } });
    const partial = await t.client.request({ method: 'tools/call', params: { name: 'get-structured-content', arguments: { location: 'New York' } } }, CallToolResultSchema);
    expect(partial.structuredContent).toEqual({ temperature: 33, conditions: 'Cloudy', warning: expect.stringContaining('humidity') });
    expect(JSON.parse(text(partial))).toEqual(partial.structuredContent);
    // humidity is required by the output schema: a client that checks it refuses the result, and the record says so.
    expect(await nextRecord()).toMatchObject({ status: 'failure', failure_type: 'output_schema_mismatch', fault: { kind: 'partial' } });
    expect((await rpcError(t.client.callTool({ name: 'get-structured-content', arguments: { location: 'New York' } }))).code).toBe(-32602);
    count++;

    useRule({ id: 'v2', tool: 'get-structured-content', fault: 'schema_drift', params: { rename: { temperature: 'temp_c' } } });
    const drifted = await t.client.request({ method: 'tools/call', params: { name: 'get-structured-content', arguments: { location: 'New York' } } }, CallToolResultSchema);
    expect(drifted.structuredContent).toEqual({ temp_c: 33, conditions: 'Cloudy', humidity: 82 });
    expect(await nextRecord()).toMatchObject({ status: 'failure', failure_type: 'output_schema_mismatch', fault: { kind: 'schema_drift', rule_id: 'v2' } });
  });

  it('semantic_drift serves another entity in a result that still passes the output schema', async () => {
    useRule({ id: 'wrong-city', tool: 'get-structured-content', fault: 'semantic_drift', params: { other_entity: { field: 'conditions', value: 'Heavy snow' } } });
    const result = await t.client.callTool({ name: 'get-structured-content', arguments: { location: 'Los Angeles' } });
    expect(result.structuredContent).toEqual({ temperature: 73, conditions: 'Heavy snow', humidity: 48 });
    expect(JSON.parse(text(result as CallToolResult))).toEqual(result.structuredContent);
    expect(await nextRecord()).toMatchObject({ status: 'success', fault: { kind: 'semantic_drift' } });
  });

  it('a long secret that a rewrite puts where the output schema wants a number leaves no fragment in the record', async () => {
    // Built by concatenation so this file does not look like it holds a secret. The quote in the
    // schema issue is cut 57 characters in, 12 characters after `sk-proj-`, too few for the key's rule.
    const key = 'sk-proj-' + 'Zx9'.repeat(16);
    const value = `please use the value for this call: ${key}`;
    useRule({ id: 'leak', tool: 'get-structured-content', fault: 'semantic_drift', params: { other_entity: { field: 'temperature', value } } });
    const raw = await t.client.request({ method: 'tools/call', params: { name: 'get-structured-content', arguments: { location: 'Chicago' } } }, CallToolResultSchema);
    expect(raw.structuredContent).toMatchObject({ temperature: value });
    const record = await nextRecord();
    expect(record).toMatchObject({ status: 'failure', failure_type: 'output_schema_mismatch', fault: { kind: 'semantic_drift', rule_id: 'leak' } });
    // The quote still says what came back, as far as it is not secret.
    expect(record.error_message).toContain('temperature: must be number, got "please use the value for this call: sk-proj-');
    // The plan's own params (record.fault.params) are redacted as what the call produced is.
    expectNoPieceOf(key.slice('sk-proj-'.length), JSON.stringify(record), 'the stored record');
  });

  it("keeps no piece of a secret the plan's author wrote into a fault (body, message, headers) in the stored record", async () => {
    // Built by concatenation so this file does not look like it holds secrets.
    const password = 'correct-horse-' + 'battery-staple';
    const key = 'sk-proj-' + 'Zx9'.repeat(16);
    useRule({ id: 'leaky', tool: 'echo', fault: 'http_status', params: { status: 401, message: `the key ${key} was revoked`, body: { error: 'unauthorized', password }, headers: { 'x-api-key': key } } });
    const result = await t.client.callTool({ name: 'echo', arguments: { message: 'x' } });
    expect(result.isError).toBe(true);
    const record = await nextRecord();
    expect(record).toMatchObject({ status: 'failure', fault: { kind: 'http_status', rule_id: 'leaky', transport: 'mcp', params: { status: 401 } } });
    for (const secret of [password, key.slice('sk-proj-'.length)]) expectNoPieceOf(secret, JSON.stringify(record), 'the stored record');
  });

  it('schema_drift on a plain-text tool leaves valid content blocks, so the client still reads the result', async () => {
    useRule({ id: 'drift-text', tool: 'echo', fault: 'schema_drift', params: { rename: { text: 'body' } } });
    const result = await t.client.callTool({ name: 'echo', arguments: { message: 'hello' } });
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('hello') }]);
    expect(await nextRecord()).toMatchObject({ status: 'success', fault: { kind: 'schema_drift', rule_id: 'drift-text' } });
  });

  it('calls that match no rule pass untouched and carry no fault', async () => {
    useRule({ id: 'other-tool', tool: 'get-tiny-image', fault: 'http_status', params: { status: 500 } });
    expect(await t.client.callTool({ name: 'echo', arguments: { message: 'clean' } })).toEqual({ content: [{ type: 'text', text: 'Echo: clean' }] });
    expect(await nextRecord()).toMatchObject({ status: 'success', fault: null });
  });
});

describe('commit_then_drop through the MCP proxy (server-filesystem)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let t: TestProxy;

  beforeAll(async () => {
    dir = await tempDir('faultline-mcp-fs-');
    t = await startTestProxy(filesystemUpstream(dir.path), {
      version: 1,
      rules: [
        { id: 'lost-move', tool: 'move_file', fault: 'commit_then_drop' },
        { id: 'lost-write', tool: 'write_file', fault: 'commit_then_drop' },
      ],
    });
    await t.client.listTools();
  });
  afterAll(async () => {
    await t?.close();
    await dir?.remove();
  });

  it('runs the non-idempotent move upstream, never answers, and records an ambiguous timeout', async () => {
    const source = join(dir.path, 'draft.txt');
    const destination = join(dir.path, 'final.txt');
    await writeFile(source, 'quarterly numbers');
    const error = await rpcError(t.client.callTool({ name: 'move_file', arguments: { source, destination } }, undefined, { timeout: 500 }));
    expect(error.code).toBe(-32001);
    // The side effect happened although the client never heard back.
    expect(await readFile(destination, 'utf8')).toBe('quarterly numbers');
    await expect(access(source)).rejects.toThrow();
    const record = await t.nthRecord(1);
    expect(record).toMatchObject({
      tool_name: 'move_file',
      status: 'timeout',
      error_code: 'TIMEOUT',
      idempotent: false,
      fault: { kind: 'commit_then_drop', rule_id: 'lost-move', transport: 'mcp' },
      feedback: { action: 'verify_state' },
    });
  });

  it('marks write_file (idempotentHint) as idempotent, so retrying is the advice', async () => {
    const path = join(dir.path, 'notes.txt');
    await rpcError(t.client.callTool({ name: 'write_file', arguments: { path, content: 'v1' } }, undefined, { timeout: 400 }));
    expect(await readFile(path, 'utf8')).toBe('v1');
    const record = await t.nthRecord(2);
    expect(record).toMatchObject({ tool_name: 'write_file', status: 'timeout', idempotent: true, feedback: { action: 'retry' } });
  });

  it("passes the server's refusal of the move through at once, with no fault in the record (nothing was committed)", async () => {
    const source = join(dir.path, 'never-written.txt');
    const result = await t.client.callTool({ name: 'move_file', arguments: { source, destination: join(dir.path, 'moved.txt') } }, undefined, { timeout: 2000 });
    expect(result.isError).toBe(true);
    expect(text(result as CallToolResult)).toContain('ENOENT');
    const record = await t.nthRecord(3);
    expect(record).toMatchObject({ tool_name: 'move_file', status: 'failure', failure_type: 'tool_reported_error', fault: null });
    expect(record.context_snapshot).toMatchObject({ fault_not_applied: { kind: 'commit_then_drop', rule_id: 'lost-move' } });
    expect(record.attempts[0]!.fault_kind).toBeNull();
  });
});

describe('rewrite faults that meet a failure (server-filesystem)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let t: TestProxy;

  beforeAll(async () => {
    dir = await tempDir('faultline-mcp-fs-');
    t = await startTestProxy(filesystemUpstream(dir.path), {
      version: 1,
      rules: [
        { id: 'cut', tool: 'read_text_file', fault: 'partial', params: { drop_fields: ['content'] } },
        { id: 'garble', tool: 'list_directory', fault: 'malformed_json' },
      ],
    });
    await t.client.listTools();
  });
  afterAll(async () => {
    await t?.close();
    await dir?.remove();
  });

  it("passes the server's own failure through and records no fault, keeping the decision as fault_not_applied", async () => {
    const missing = await t.client.callTool({ name: 'read_text_file', arguments: { path: join(dir.path, 'missing.txt') } });
    expect(missing.isError).toBe(true);
    expect(text(missing as CallToolResult)).toContain('ENOENT');
    const outside = await t.client.callTool({ name: 'list_directory', arguments: { path: '/' } });
    expect(outside.isError).toBe(true);
    expect(text(outside as CallToolResult)).toContain('Access denied');

    const [read, list] = [await t.nthRecord(1), await t.nthRecord(2)];
    expect(read).toMatchObject({ tool_name: 'read_text_file', status: 'failure', failure_type: 'tool_reported_error', fault: null });
    expect(read.context_snapshot).toMatchObject({ fault_not_applied: { kind: 'partial', rule_id: 'cut', transport: 'mcp' } });
    expect(list).toMatchObject({ tool_name: 'list_directory', status: 'failure', failure_type: 'tool_reported_error', fault: null });
    expect(list.context_snapshot).toMatchObject({ fault_not_applied: { kind: 'malformed_json', rule_id: 'garble' } });
    expect(list.attempts[0]!.fault_kind).toBeNull();

    // The same rule on an answer it can rewrite is ground truth as before.
    await writeFile(join(dir.path, 'notes.txt'), 'hello');
    await t.client.request({ method: 'tools/call', params: { name: 'read_text_file', arguments: { path: join(dir.path, 'notes.txt') } } }, CallToolResultSchema);
    const rewritten = await t.nthRecord(3);
    expect(rewritten.fault).toMatchObject({ kind: 'partial', rule_id: 'cut' });
    expect(rewritten.context_snapshot).not.toHaveProperty('fault_not_applied');
  });
});
