/**
 * A loopback port where a connection is refused, for tests of an unreachable upstream.
 *
 * Closing a server that listened on port 0 frees a port the kernel may hand to the very next
 * `listen(0)`, often the proxy the test then starts, which would forward to itself. So the port
 * comes from below the ephemeral range, which `listen(0)` never hands out, and is probed first.
 */
import { connect } from 'node:net';
import { readFileSync } from 'node:fs';

function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 2000 ? low : 32768;
  } catch {
    return 32768;
  }
}

function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

export async function refusedPort(): Promise<number> {
  const low = Math.max(1024, ephemeralLow() - 10_000);
  const span = ephemeralLow() - low;
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * span);
    if (await refused(port)) return port;
  }
  throw new Error('no refused loopback port found below the ephemeral range');
}
