/**
 * Where an upstream link's connection stands, as one value (`UpstreamLink` holds one), and the
 * pure transitions between its states:
 *
 *   connected ──exit──▶ restarting (with `restart`) ──started again──▶ connected
 *       │                    │ attempts of the outage run out
 *       └──exit──▶ lost ◀────┘
 *   any ──close()──▶ closed
 *
 * Each state keeps the last connection: requests are sent on it (and fail as lost), and close()
 * closes it. `attempts` counts the restarts of the current outage; it survives a restarted server
 * only until that server answers its tool list, so that a proxy running for weeks does not run out
 * of restarts while a server that exits before it answers uses its attempts up.
 */
import type { UpstreamConnection } from './upstream.js';
import type { UpstreamLoss } from './upstream-loss.js';

export type UpstreamState =
  /** Requests go to `connection`. `attempts`: restarts that brought it up, until it answered (0 once it has). */
  | { kind: 'connected'; connection: UpstreamConnection; attempts: number }
  /** `connection` ended; the server is being started again, `attempts` made so far in this outage. */
  | { kind: 'restarting'; connection: UpstreamConnection; loss: UpstreamLoss; attempts: number }
  /** `connection` ended for good: no restart, or the attempts ran out. */
  | { kind: 'lost'; connection: UpstreamConnection; loss: UpstreamLoss }
  /** The link closed; `loss` is how the connection had ended before, if it had. */
  | { kind: 'closed'; connection: UpstreamConnection; loss: UpstreamLoss | undefined };

/** How many times, and how fast, a stdio server that exited is started again; see `McpRestartOptions`. */
export interface RestartPolicy {
  maxRestarts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export function connectedTo(connection: UpstreamConnection): UpstreamState {
  return { kind: 'connected', connection, attempts: 0 };
}

/** How the connection had ended, in any state; undefined while connected. */
export function lossOf(state: UpstreamState): UpstreamLoss | undefined {
  return state.kind === 'connected' ? undefined : state.loss;
}

/** The connection ended on its own: restarting when the policy allows any restart, else lost. Closed stays closed. */
export function connectionLost(state: UpstreamState, loss: UpstreamLoss, policy: RestartPolicy | undefined): UpstreamState {
  if (state.kind === 'closed') return state;
  const attempts = state.kind === 'lost' ? 0 : state.attempts;
  if (policy !== undefined && policy.maxRestarts > 0) return { kind: 'restarting', connection: state.connection, loss, attempts };
  return { kind: 'lost', connection: state.connection, loss };
}

/** What to do next while restarting: wait `delayMs` then try (doubling from the first wait, capped), or give up. */
export function nextRestart(state: Extract<UpstreamState, { kind: 'restarting' }>, policy: RestartPolicy): { giveUp: true } | { giveUp: false; delayMs: number } {
  if (state.attempts >= policy.maxRestarts) return { giveUp: true };
  return { giveUp: false, delayMs: Math.min(policy.initialDelayMs * 2 ** state.attempts, policy.maxDelayMs) };
}

/** One more attempt of this outage is being made. */
export function restartAttempted(state: UpstreamState): UpstreamState {
  return state.kind === 'restarting' ? { ...state, attempts: state.attempts + 1 } : state;
}

/** The attempts ran out: the connection stays lost. */
export function restartsExhausted(state: UpstreamState): UpstreamState {
  return state.kind === 'restarting' ? { kind: 'lost', connection: state.connection, loss: state.loss } : state;
}

/**
 * Requests go to `connection` now: a server started again (the outage's attempts are kept until
 * it answers), or a new session with a server that forgot the old one.
 */
export function reconnected(state: UpstreamState, connection: UpstreamConnection): UpstreamState {
  if (state.kind === 'closed') return state;
  return { kind: 'connected', connection, attempts: state.kind === 'lost' ? 0 : state.attempts };
}

/** The connected server answered: its next exit is a new outage, with the whole budget. */
export function serverAnswered(state: UpstreamState): UpstreamState {
  return state.kind === 'connected' && state.attempts !== 0 ? { ...state, attempts: 0 } : state;
}

export function closed(state: UpstreamState): UpstreamState {
  return state.kind === 'closed' ? state : { kind: 'closed', connection: state.connection, loss: lossOf(state) };
}
