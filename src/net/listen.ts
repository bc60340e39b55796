/**
 * Starts a server listening and settles once it is bound: resolves with the bound address, or
 * rejects with the listen error (EADDRINUSE, EACCES, ...) instead of leaving it to an `error`
 * event nobody handles. Shared by every server faultline starts.
 */
import type { Server } from 'node:net';
import type { AddressInfo } from 'node:net';

export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}
