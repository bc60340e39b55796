/**
 * The suite faultline ships (`src/failbench/scenarios/default/`), and `loadSuite`, which loads it
 * or any directory of scenario files: what `faultline bench` runs and what `faultline/bench`
 * offers evaluators.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../core/errors.js';
import { loadScenarios, type LoadScenariosOptions } from './scenario-loader.js';
import type { Scenario } from './types.js';

/**
 * The bundled suite's directory. From src/ it sits beside the code; the build copies it into
 * dist/, and a build made by tsc alone falls back on the repository's src/ copy when it is there.
 * @throws ConfigError when neither is there.
 */
export function defaultSuiteDir(): string {
  const candidates = [new URL('./scenarios/default/', import.meta.url), new URL('../../src/failbench/scenarios/default/', import.meta.url)];
  for (const url of candidates) {
    const path = fileURLToPath(url);
    if (existsSync(path)) return path;
  }
  throw new ConfigError('the default FailBench suite is not installed; pass a directory of scenario files', 'suite');
}

/**
 * Loads a suite: `'default'` (or nothing) for the bundled one, else every scenario file under
 * `dir`, validated (see scenario-loader.ts), sorted by id.
 * @throws ScenarioError listing every problem found.
 *
 * @example
 * const scenarios = await loadSuite('default', { filter: 'idempotency_safety' });
 */
export function loadSuite(dir: string = 'default', options: LoadScenariosOptions = {}): Promise<Scenario[]> {
  return loadScenarios(dir === 'default' ? defaultSuiteDir() : dir, options);
}
