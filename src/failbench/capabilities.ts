/**
 * The runtime's optional checks, as a FailBench run turns them on (`bench --capabilities`): each
 * is off by default in the runtime, and a run with one on measures what it adds to the feedback
 * an agent gets. `post-conditions` gives the catalog's tools the checks their authors would
 * declare (catalog-post-conditions.ts); the others are the runtime's own options.
 */
import { ConfigError } from '../core/errors.js';
import type { ToolSpec } from '../runtime/define-tool.js';
import type { RuntimeOptions } from '../runtime/runtime.js';
import { catalogVerify } from './catalog-post-conditions.js';

export const CAPABILITIES = ['loop-guard', 'post-conditions', 'adaptive-timeout', 'breaker-probes'] as const;
export type Capability = (typeof CAPABILITIES)[number];

/**
 * The capabilities a comma-separated list names (`all` for every one), in {@link CAPABILITIES}
 * order, each once.
 * @throws ConfigError naming an unknown one and the known ones.
 */
export function parseCapabilities(text: string): Capability[] {
  const names = text.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (names.includes('all')) return [...CAPABILITIES];
  const unknown = names.find((n) => !(CAPABILITIES as readonly string[]).includes(n));
  if (unknown !== undefined) throw new ConfigError(`unknown capability "${unknown}": use ${CAPABILITIES.join(', ')} or all`, 'capabilities');
  return CAPABILITIES.filter((c) => names.includes(c));
}

/** What the runtime is created with for these capabilities. */
export function runtimeCapabilityOptions(capabilities: readonly Capability[]): Pick<RuntimeOptions, 'loopGuard' | 'breakerProbes'> {
  return {
    ...(capabilities.includes('loop-guard') ? { loopGuard: true } : {}),
    ...(capabilities.includes('breaker-probes') ? { breakerProbes: true } : {}),
  };
}

/** What a tool's definition gains with these capabilities: an adaptive timeout, its post-condition. */
export function toolCapabilitySpec(toolName: string, capabilities: readonly Capability[]): Pick<ToolSpec<unknown, unknown>, 'adaptiveTimeout' | 'verify'> {
  const verify = capabilities.includes('post-conditions') ? catalogVerify(toolName) : undefined;
  return {
    ...(capabilities.includes('adaptive-timeout') ? { adaptiveTimeout: true } : {}),
    ...(verify !== undefined ? { verify } : {}),
  };
}
