/**
 * With an empty plan the proxy must be invisible. For each reference server from npm
 * (server-everything, server-filesystem, server-memory), the same calls go straight to one copy of
 * the server and through the proxy to another: the answers are deep-equal, whether results,
 * isError results or JSON-RPC errors, tools/list is identical (names, schemas, annotations), and
 * every proxied call is recorded with no fault.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { everythingUpstream, filesystemUpstream, memoryUpstream, startTestProxy, tempDir, type TestProxy } from './mcp-proxy.test-helpers.js';
import type { McpUpstream } from './upstream.js';

/** What a caller got: a result (isError or not), or a JSON-RPC error with its code, message and data. */
type Answer = { result: unknown } | { error: { code: number; message: string; data: unknown } };

async function answer(call: Promise<unknown>): Promise<Answer> {
  try {
    return { result: await call };
  } catch (error) {
    if (error instanceof McpError) return { error: { code: error.code, message: error.message, data: error.data } };
    throw error;
  }
}

/** A client straight to its own copy of the server, started as the proxy starts it. */
async function directClient(upstream: McpUpstream): Promise<Client> {
  if (!('command' in upstream)) throw new Error('a command upstream is needed here');
  const client = new Client({ name: 'direct', version: '1' });
  await client.connect(
    new StdioClientTransport({ command: upstream.command, args: [...(upstream.args ?? [])], ...(upstream.env === undefined ? {} : { env: upstream.env }), stderr: 'ignore' }),
  );
  return client;
}

interface Call {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * Makes each call straight and through the proxy, in turn, and returns the pairs. Calls go one at
 * a time so that stateful servers see the same sequence on both sides.
 */
async function bothWays(direct: Client, proxied: Client, calls: readonly Call[]): Promise<Array<{ call: string; straight: Answer; through: Answer }>> {
  const pairs = [];
  for (const call of calls) {
    const straight = await answer(direct.callTool(call));
    const through = await answer(proxied.callTool(call));
    pairs.push({ call: call.name, straight, through });
  }
  return pairs;
}

function expectSameAnswers(pairs: Array<{ call: string; straight: Answer; through: Answer }>, normalize: (a: Answer) => unknown = (a) => a): void {
  for (const { call, straight, through } of pairs) {
    expect({ call, answer: normalize(through) }).toEqual({ call, answer: normalize(straight) });
  }
}

async function expectRecordedWithoutFaults(t: TestProxy, calls: readonly Call[]): Promise<void> {
  const records = await t.records();
  expect(records.map((r) => r.tool_name)).toEqual(calls.map((c) => c.name));
  expect(records.map((r) => r.input_params)).toEqual(calls.map((c) => c.arguments));
  expect(records.every((r) => r.fault === null && r.attempts[0]!.fault_kind === null)).toBe(true);
}

describe('pass-through with an empty plan: server-everything', () => {
  let direct: Client;
  let t: TestProxy;

  beforeAll(async () => {
    [direct, t] = await Promise.all([directClient(everythingUpstream()), startTestProxy(everythingUpstream(), { version: 1, rules: [] })]);
  });
  afterAll(async () => {
    await direct?.close();
    await t?.close();
  });

  it('lists the same tools, with the same schemas and annotations', async () => {
    const [straight, through] = await Promise.all([direct.listTools(), t.client.listTools()]);
    expect(through).toEqual(straight);
    expect(through.tools.length).toBeGreaterThan(5);
  });

  it('answers text, structured, image, annotated, resource and error calls unchanged', async () => {
    const calls: Call[] = [
      { name: 'echo', arguments: { message: 'same either way' } },
      { name: 'get-sum', arguments: { a: 2.5, b: -7 } },
      { name: 'get-structured-content', arguments: { location: 'Chicago' } },
      { name: 'get-tiny-image', arguments: {} },
      { name: 'get-annotated-message', arguments: { messageType: 'error', includeImage: true } },
      { name: 'get-resource-links', arguments: { count: 3 } },
      { name: 'get-resource-reference', arguments: { resourceType: 'Text', resourceId: 2 } },
      // The server rejects these; the rejection must come through as it was.
      { name: 'get-sum', arguments: { a: 'two' } },
      { name: 'no-such-tool', arguments: {} },
    ];
    const pairs = await bothWays(direct, t.client, calls);
    // The text resource says when it was made ("created at 1:06:52 PM"); the two servers made theirs apart.
    expectSameAnswers(pairs, (a) => JSON.parse(JSON.stringify(a).replace(/created at \d{1,2}:\d{2}:\d{2}\s?[AP]M/g, 'created at <time>')) as unknown);
    expect(pairs[2]!.through).toMatchObject({ result: { structuredContent: { temperature: 36, humidity: 82 } } });
    expect((pairs[3]!.through as { result: { content: unknown[] } }).result.content).toContainEqual(expect.objectContaining({ type: 'image', mimeType: 'image/png' }));
    expect(pairs[7]!.through).toMatchObject({ result: { isError: true } });
    await expectRecordedWithoutFaults(t, calls);
  });
});

describe('pass-through with an empty plan: server-filesystem', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let direct: Client;
  let t: TestProxy;

  beforeAll(async () => {
    dir = await tempDir('faultline-mcp-passthrough-fs-');
    await writeFile(join(dir.path, 'notes.txt'), 'first line\nsecond line\nthird line\n');
    await writeFile(join(dir.path, 'todo.md'), '# todo\n- compare answers\n');
    await writeFile(join(dir.path, 'pixel.png'), Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex'));
    // Both copies serve the same directory, and every call below leaves it as it was.
    [direct, t] = await Promise.all([directClient(filesystemUpstream(dir.path)), startTestProxy(filesystemUpstream(dir.path), { version: 1, rules: [] })]);
  });
  afterAll(async () => {
    await direct?.close();
    await t?.close();
    await dir?.remove();
  });

  it('lists the same tools, with the same schemas and annotations', async () => {
    const [straight, through] = await Promise.all([direct.listTools(), t.client.listTools()]);
    expect(through).toEqual(straight);
    expect(through.tools.find((tool) => tool.name === 'write_file')?.annotations).toMatchObject({ destructiveHint: true, idempotentHint: true });
  });

  it('answers reads, listings, searches, a dry-run edit and a refused path unchanged', async () => {
    const notes = join(dir.path, 'notes.txt');
    const calls: Call[] = [
      { name: 'list_allowed_directories', arguments: {} },
      { name: 'read_text_file', arguments: { path: notes } },
      { name: 'read_text_file', arguments: { path: notes, head: 1 } },
      { name: 'read_multiple_files', arguments: { paths: [notes, join(dir.path, 'todo.md')] } },
      { name: 'read_media_file', arguments: { path: join(dir.path, 'pixel.png') } },
      { name: 'list_directory', arguments: { path: dir.path } },
      { name: 'list_directory_with_sizes', arguments: { path: dir.path, sortBy: 'size' } },
      { name: 'directory_tree', arguments: { path: dir.path } },
      { name: 'search_files', arguments: { path: dir.path, pattern: '*.txt' } },
      { name: 'edit_file', arguments: { path: notes, edits: [{ oldText: 'second line', newText: 'line two' }], dryRun: true } },
      { name: 'read_text_file', arguments: { path: '/etc/hostname' } },
    ];
    const pairs = await bothWays(direct, t.client, calls);
    expectSameAnswers(pairs);
    expect(pairs[1]!.through).toMatchObject({ result: { content: [{ type: 'text', text: 'first line\nsecond line\nthird line\n' }] } });
    expect(JSON.stringify(pairs[9]!.through)).toContain('+line two');
    expect(pairs[10]!.through).toMatchObject({ result: { isError: true } });
    await expectRecordedWithoutFaults(t, calls);
  });
});

describe('pass-through with an empty plan: server-memory', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let direct: Client;
  let t: TestProxy;

  beforeAll(async () => {
    dir = await tempDir('faultline-mcp-passthrough-memory-');
    // Two graphs that start empty and see the same writes.
    [direct, t] = await Promise.all([
      directClient(memoryUpstream(join(dir.path, 'direct.jsonl'))),
      startTestProxy(memoryUpstream(join(dir.path, 'proxied.jsonl')), { version: 1, rules: [] }),
    ]);
  });
  afterAll(async () => {
    await direct?.close();
    await t?.close();
    await dir?.remove();
  });

  it('mirrors the server and lists the same tools, with the same schemas and annotations', async () => {
    expect(t.client.getServerVersion()).toEqual(direct.getServerVersion());
    const [straight, through] = await Promise.all([direct.listTools(), t.client.listTools()]);
    expect(through).toEqual(straight);
    expect(through.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['create_entities', 'create_relations', 'read_graph', 'search_nodes', 'open_nodes']));
    expect(through.tools.find((tool) => tool.name === 'create_entities')?.outputSchema).toBeDefined();
  });

  it('builds the same knowledge graph through the proxy as straight, and reads it back', async () => {
    const calls: Call[] = [
      {
        name: 'create_entities',
        arguments: {
          entities: [
            { name: 'Ada Lovelace', entityType: 'person', observations: ['wrote the first program'] },
            { name: 'Analytical Engine', entityType: 'machine', observations: ['designed by Babbage'] },
            { name: 'Charles Babbage', entityType: 'person', observations: [] },
          ],
        },
      },
      {
        name: 'create_relations',
        arguments: {
          relations: [
            { from: 'Ada Lovelace', to: 'Analytical Engine', relationType: 'programmed' },
            { from: 'Charles Babbage', to: 'Analytical Engine', relationType: 'designed' },
          ],
        },
      },
      { name: 'add_observations', arguments: { observations: [{ entityName: 'Charles Babbage', contents: ['mathematician', 'inventor'] }] } },
      // Already there: the server answers with what it added, nothing.
      { name: 'create_entities', arguments: { entities: [{ name: 'Ada Lovelace', entityType: 'person', observations: [] }] } },
      { name: 'search_nodes', arguments: { query: 'Babbage' } },
      { name: 'open_nodes', arguments: { names: ['Ada Lovelace', 'Analytical Engine'] } },
      { name: 'delete_observations', arguments: { deletions: [{ entityName: 'Charles Babbage', observations: ['inventor'] }] } },
      // The server reports an unknown entity as an error.
      { name: 'add_observations', arguments: { observations: [{ entityName: 'Nobody', contents: ['x'] }] } },
      { name: 'read_graph', arguments: {} },
    ];
    const pairs = await bothWays(direct, t.client, calls);
    expectSameAnswers(pairs);
    expect(pairs[7]!.through).toMatchObject({ result: { isError: true } });
    expect(pairs[8]!.through).toMatchObject({
      result: {
        structuredContent: {
          entities: [
            { name: 'Ada Lovelace', entityType: 'person', observations: ['wrote the first program'] },
            { name: 'Analytical Engine', entityType: 'machine', observations: ['designed by Babbage'] },
            { name: 'Charles Babbage', entityType: 'person', observations: ['mathematician'] },
          ],
          relations: [
            { from: 'Ada Lovelace', to: 'Analytical Engine', relationType: 'programmed' },
            { from: 'Charles Babbage', to: 'Analytical Engine', relationType: 'designed' },
          ],
        },
      },
    });
    await expectRecordedWithoutFaults(t, calls);
    const records = await t.records();
    expect(records.map((r) => [r.tool_name, r.status, r.idempotent])).toEqual([
      ['create_entities', 'success', false],
      ['create_relations', 'success', false],
      ['add_observations', 'success', false],
      ['create_entities', 'success', false],
      ['search_nodes', 'success', true],
      ['open_nodes', 'success', true],
      ['delete_observations', 'success', true],
      ['add_observations', 'failure', false],
      ['read_graph', 'success', true],
    ]);
    expect(records[7]).toMatchObject({ failure_category: 'business', failure_type: 'tool_reported_error', error_code: 'MCP_TOOL_ERROR' });
  });

  it('passes the knowledge-graph resource through', async () => {
    const [straight, through] = await Promise.all([direct.listResources(), t.client.listResources()]);
    expect(through).toEqual(straight);
    const uri = through.resources[0]!.uri;
    expect(await t.client.readResource({ uri })).toEqual(await direct.readResource({ uri }));
  });
});
