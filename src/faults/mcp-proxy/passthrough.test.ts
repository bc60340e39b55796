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
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
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

/**
 * A client straight to its own copy of the server, started as the proxy starts it, declaring what
 * the proxied test client declares (nothing), which is what the proxy declares for it.
 */
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

  it('answers ping, completion/complete and logging/setLevel as the server does, and records none of them', async () => {
    const before = (await t.records()).length;
    expect(await t.client.ping()).toEqual(await direct.ping());
    const department = { ref: { type: 'ref/prompt' as const, name: 'completable-prompt' }, argument: { name: 'department', value: 'S' } };
    const completed = await t.client.complete(department);
    expect(completed).toEqual(await direct.complete(department));
    expect(completed.completion.values).toEqual(['Sales', 'Support']);
    // The second argument's values depend on the first, sent as context.
    const lead = { ...department, argument: { name: 'name', value: '' }, context: { arguments: { department: 'Support' } } };
    expect((await t.client.complete(lead)).completion.values).toEqual(['John', 'Kim', 'Lee']);
    expect(await answer(t.client.complete({ ref: { type: 'ref/prompt', name: 'no-such-prompt' }, argument: { name: 'x', value: '' } }))).toEqual(
      await answer(direct.complete({ ref: { type: 'ref/prompt', name: 'no-such-prompt' }, argument: { name: 'x', value: '' } })),
    );
    expect(await t.client.setLoggingLevel('warning')).toEqual(await direct.setLoggingLevel('warning'));
    expect((await t.records()).length).toBe(before);
  });

  it('relays a resource subscription and the notifications/resources/updated that follow it, to the subscribed client only', async () => {
    const uri = (await t.client.listResources()).resources[0]!.uri;
    const updated: string[] = [];
    const first = new Promise<void>((resolve) =>
      t.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
        updated.push(n.params.uri);
        resolve();
      }),
    );
    const bystander = new Client({ name: 'bystander', version: '1' });
    const bystanderSaw: string[] = [];
    bystander.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void bystanderSaw.push(n.params.uri));
    const [serverSide, clientSide] = InMemoryTransport.createLinkedPair();
    await t.proxy.connect(serverSide);
    await bystander.connect(clientSide);
    try {
      expect(await t.client.subscribeResource({ uri })).toEqual({});
      // On: the server sends an update for every subscribed resource at once, then every 5 s.
      await t.client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
      await first;
      await t.client.callTool({ name: 'toggle-subscriber-updates', arguments: {} });
      expect(updated[0]).toBe(uri);
      expect(bystanderSaw).toEqual([]);
      expect(await t.client.unsubscribeResource({ uri })).toEqual({});
    } finally {
      await bystander.close();
    }
  });
});

describe('large results through the proxy (server-filesystem)', () => {
  let dir: Awaited<ReturnType<typeof tempDir>>;
  let t: TestProxy;
  const big = 'a line of a large log file, repeated until it weighs five megabytes\n'.repeat(80_000);
  const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), Buffer.alloc(4 * 1024 * 1024, 0xa5)]);

  beforeAll(async () => {
    dir = await tempDir('faultline-mcp-passthrough-large-');
    await writeFile(join(dir.path, 'big.log'), big);
    await writeFile(join(dir.path, 'big.png'), png);
    t = await startTestProxy(filesystemUpstream(dir.path), { version: 1, rules: [] });
  });
  afterAll(async () => {
    await t?.close();
    await dir?.remove();
  });

  it('passes a 5 MB text and a 4 MB image through whole (messages over the SDK default of 10 MiB), and records them cut to raw_output with their full length', async () => {
    // The server sends each twice, as content and as structured content: 11 MB messages.
    const text = await t.client.callTool({ name: 'read_text_file', arguments: { path: join(dir.path, 'big.log') } });
    expect(text).toEqual({ content: [{ type: 'text', text: big }], structuredContent: { content: big } });
    const image = await t.client.callTool({ name: 'read_media_file', arguments: { path: join(dir.path, 'big.png') } });
    expect(image.content).toEqual([{ type: 'image', data: png.toString('base64'), mimeType: 'image/png' }]);
    // The server is still there.
    expect(await t.client.callTool({ name: 'list_allowed_directories', arguments: {} })).toMatchObject({ content: [{ type: 'text' }] });
    const [textRecord, imageRecord] = await t.records();
    expect(textRecord).toMatchObject({ status: 'success', output_length: JSON.stringify(text.content).length });
    expect(textRecord!.raw_output).toBe(JSON.stringify(text.content).slice(0, 2000));
    expect(imageRecord).toMatchObject({ status: 'success', output_length: JSON.stringify(image.content).length });
    expect(imageRecord!.raw_output).toHaveLength(2000);
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
