// Cold import time: a fresh `node` process per sample imports one entry and reports how long the
// import took (performance.now() around the dynamic import), and the process's whole wall time
// is measured from outside. Contenders run interleaved, round after round, so machine load hits
// them alike. `faultline` (the root entry) against the runtime module alone, and against the root
// entry of a base build (FAULTLINE_PERF_BASE_DIST: the dist folder of a build of the base commit)
// when given:
//   npm run build && FAULTLINE_PERF_BASE_DIST=/path/to/base/dist node perf/run.js cold-import
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { table } from './harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const dist = join(here, '..', 'dist');
const ROUNDS = Number(process.env.FAULTLINE_PERF_IMPORT_ROUNDS ?? 25);

function sample(file) {
  const script = file === null
    ? 'process.stdout.write("0")'
    : `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(String(performance.now() - t));`;
  const start = process.hrtime.bigint();
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  const wallMs = Number(process.hrtime.bigint() - start) / 1e6;
  if (child.status !== 0) throw new Error(`importing ${file} failed: ${child.stderr}`);
  return { importMs: Number(child.stdout), wallMs };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.9))];

export async function run() {
  const contenders = {
    "import 'faultline' (dist/index.js)": join(dist, 'index.js'),
    'runtime module alone (dist/runtime/runtime.js)': join(dist, 'runtime', 'runtime.js'),
  };
  const base = process.env.FAULTLINE_PERF_BASE_DIST;
  if (base !== undefined) contenders["base build: import 'faultline'"] = join(base, 'index.js');
  contenders['node, no import (process start)'] = null;
  const samples = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) for (const [name, file] of Object.entries(contenders)) samples[name].push(sample(file));
  const reference = median(samples['runtime module alone (dist/runtime/runtime.js)'].map((s) => s.importMs));
  const rows = Object.entries(samples).map(([name, ss]) => {
    const imp = ss.map((s) => s.importMs);
    const wall = ss.map((s) => s.wallMs);
    return [name, `${median(imp).toFixed(1)} ms`, `${p90(imp).toFixed(1)} ms`, `${median(wall).toFixed(1)} ms`, contenders[name] === null ? '' : `${(median(imp) / reference).toFixed(2)}x`];
  });
  return {
    title: `Cold import time (${ROUNDS} fresh processes per contender, interleaved)`,
    markdown: table(['contender', 'import, median', 'import, p90', 'process wall, median', 'vs runtime alone'], rows),
  };
}
