/**
 * Where the MCP proxy's records go: a sink of the caller's, or a recorder in front of a store it
 * opens (or is given), with the store's retention. A SQLite file is created only once the
 * start-up handshake succeeded, so a server that cannot be started leaves no empty database.
 */
import type { Clock } from '../../core/clock.js';
import { parseDurationMs } from '../../core/duration-text.js';
import { ConfigError } from '../../core/errors.js';
import { checkRecordingTarget, openRecordingNow, type Recording, type RecordingTarget } from '../../record/open-recording.js';
import { DEFAULT_SQLITE_PATH, sqlitePathOf } from '../../store/open-store.js';
import { retentionFor, type Retention } from '../../store/retention.js';
import type { McpProxyOptions } from './proxy.js';
import type { RecordSink } from './tool-call.js';
import { openUpstream, type UpstreamConnection } from './upstream.js';

export interface ProxyRecording extends Recording {
  sink: RecordSink;
  retention?: Retention;
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Checked before anything starts: a bad duration is the caller's mistake, not a failed start. */
export function checkRetention(options: McpProxyOptions): void {
  if (options.retention === undefined) return;
  parseDurationMs(options.retention, 'retention');
  if (options.recorder !== undefined) throw new ConfigError('retention needs a store: only records in a store are pruned', 'retention');
}

/** Without a sink of the caller's, records go to a store: the one given, else the default SQLite file. */
const recordingTarget = (options: McpProxyOptions, log: (line: string) => void): RecordingTarget =>
  options.recorder !== undefined
    ? { store: options.store, recorder: options.recorder }
    : {
        store: options.store ?? DEFAULT_SQLITE_PATH,
        recording: { ...options.recording, onError: (error) => log(`recording: ${errorText(error)}`) },
        open: options.cwd === undefined ? {} : { cwd: options.cwd },
      };

async function openRecording(options: McpProxyOptions, log: (line: string) => void, clock: Clock): Promise<ProxyRecording> {
  const recording = await openRecordingNow(recordingTarget(options, log));
  const { store } = recording;
  const retention = retentionFor(options.retention, store, { onError: (error) => log(`retention: ${errorText(error)}`), now: () => clock.now() });
  if (retention === undefined) return { ...recording, sink: recording.sink! };
  // The schedule stops before the store closes, so no prune runs against a closed store.
  const close = async () => {
    await retention.stop();
    await recording.close();
  };
  return { ...recording, sink: recording.sink!, retention, close };
}

async function closeRecording(r: ProxyRecording | undefined): Promise<void> {
  await r?.close();
}

/**
 * Opens the recording and the start-up connection, in the order that leaves nothing behind when
 * either fails: a store that is not a SQLite file first (a bad spec or an unreachable database is
 * reported without starting the server), a SQLite file after the handshake.
 */
export async function openRecordingAndUpstream(
  options: McpProxyOptions,
  log: (line: string) => void,
  clock: Clock,
  handshakeTimeoutMs: number,
): Promise<{ recording: ProxyRecording; startup: UpstreamConnection }> {
  checkRecordingTarget(recordingTarget(options, log));
  const createsFile = options.recorder === undefined && typeof options.store !== 'object' && sqlitePathOf(options.store, options.cwd) !== undefined;
  let recording = createsFile ? undefined : await openRecording(options, log, clock);
  let startup: UpstreamConnection;
  try {
    startup = await openUpstream(options.upstream, handshakeTimeoutMs, { capabilities: {} });
  } catch (error) {
    await closeRecording(recording);
    throw error;
  }
  if (recording === undefined) {
    try {
      recording = await openRecording(options, log, clock);
    } catch (error) {
      await startup.client.close().catch(() => undefined);
      startup.discardStderr();
      throw error;
    }
  }
  return { recording, startup };
}

