// tools/call latency: an SDK client straight to an in-process SDK server, side by side with the
// same client and server with the MCP fault proxy between them (no fault matching, every call
// recorded). Both legs use the SDK's InMemoryTransport, so the figures are the proxy's own cost:
// one more JSON-RPC hop, the plan's decision and building the record, without pipes or sockets.
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { createFaultPlan } from '../dist/faults.js';
import { startMcpProxy } from '../dist/faults/mcp-proxy/index.js';
import { compare, fmtNs, table } from './harness.js';
import { connectedClient, weatherArgs as args, weatherServer } from './mcp-weather-server.js';

export async function run() {
  const direct = await weatherServer();
  const directClient = await connectedClient(direct.clientSide);

  const upstream = await weatherServer();
  // A plan with a rule for another tool: every call is still decided, none is faulted.
  const plan = createFaultPlan({ version: 1, rules: [{ id: 'other', tool: 'send_*', fault: 'http_status', params: { status: 500 } }] });
  let recorded = 0;
  const sink = { enqueue: () => void recorded++ };
  const proxy = await startMcpProxy({ upstream: { transport: upstream.clientSide }, plan, recorder: sink });
  const [downstream, proxySide] = InMemoryTransport.createLinkedPair();
  await proxy.connect(proxySide);
  const proxiedClient = await connectedClient(downstream);

  const call = (client) => async () => {
    const result = await client.callTool({ name: 'get_weather', arguments: args });
    if (result.isError) throw new Error('unexpected tool error');
  };
  const results = await compare(
    { 'direct (client -> server)': call(directClient), 'through the proxy (client -> proxy -> server)': call(proxiedClient) },
    { batch: 200, samples: 40, warmupBatches: 10 },
  );

  await proxiedClient.close();
  await proxy.close();
  await directClient.close();
  await direct.server.close();
  await upstream.server.close();
  if (recorded === 0) throw new Error('the proxy recorded nothing');

  const base = results['direct (client -> server)'].medianNs;
  const through = results['through the proxy (client -> proxy -> server)'].medianNs;
  const rows = Object.entries(results).map(([name, m]) => [name, fmtNs(m.medianNs), fmtNs(m.p95Ns), (m.medianNs / base).toFixed(2) + 'x']);
  return {
    title: 'MCP proxy: tools/call latency, direct vs through the proxy (no fault)',
    markdown: [
      table(['path (in-process SDK transports)', 'median', 'p95', 'vs direct'], rows),
      '',
      `The proxy adds ${fmtNs(through - base)} per call (median), ${(through / base).toFixed(2)}x the direct call; ${recorded} calls recorded.`,
    ].join('\n'),
  };
}
