// `npm run perf [-- --quick] [--keep-data] [name ...]`: runs every perf/*.bench.js (or those whose
// file names contain a given name) and prints markdown for perf/RESULTS.md, each section headed
// with how long its benchmark took, and a table of those times at the end.
//
// --quick runs every benchmark at a fraction of its size (fewer records, rounds and samples; the
// sizes below, each still overridable by its own variable), to check that they all run and to
// see their shape in under two minutes; its figures are not the ones RESULTS.md quotes.
//
// Temporary files: every benchmark's go under one directory of this run (TMPDIR is pointed at it,
// so child processes write there too), removed when the run ends, however it ends. --keep-data
// uses perf/.scratch/ instead and keeps it, so the large generated inputs (the 10M-row store,
// the annotate logs) are reused by the next run with --keep-data.
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const unknown = args.filter((a) => a.startsWith('--') && a !== '--quick' && a !== '--keep-data');
if (unknown.length > 0) {
  console.error(`perf: unknown option ${unknown[0]} (takes --quick, --keep-data and benchmark names)`);
  process.exit(2);
}
const quick = args.includes('--quick');
const keep = args.includes('--keep-data');
const wanted = args.filter((a) => !a.startsWith('--'));

/** The sizes of --quick: a few thousand records, one round, a second of load. */
const QUICK = {
  FAULTLINE_PERF_QUICK: '1',
  FAULTLINE_PERF_ANNOTATE_STEPS: '5000',
  FAULTLINE_PERF_ANNOTATE_RSS_STEPS: '5000',
  FAULTLINE_PERF_ANNOTATE_ROUNDS: '1',
  HTTP_PROXY_BENCH_SECONDS: '1',
  HTTP_PROXY_BENCH_ROUNDS: '1',
  FAULTLINE_PERF_PG_N: '2000',
  FAULTLINE_PERF_OUTAGE_N: '20000',
  FAULTLINE_PERF_BURST_N: '20000',
  FAULTLINE_PERF_BURST_ROUNDS: '1',
  FAULTLINE_PERF_RECORDER_N: '5000',
  FAULTLINE_PERF_STATS_N: '100000',
  FAULTLINE_PERF_BURST_N: '20000',
  FAULTLINE_PERF_BURST_ROUNDS: '1',
  FAULTLINE_PERF_IMPORT_ROUNDS: '5',
};
if (quick) for (const [name, value] of Object.entries(QUICK)) process.env[name] ??= value;

const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.js'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();
if (files.length === 0) {
  console.error(`perf: no benchmark matches ${wanted.join(', ')} (they are perf/*.bench.js)`);
  process.exit(2);
}

const scratch = keep ? join(here, '.scratch') : mkdtempSync(join(tmpdir(), 'faultline-perf-'));
mkdirSync(scratch, { recursive: true });
// os.tmpdir() reads TMPDIR on every call, and child processes inherit it.
process.env.TMPDIR = scratch;
const cleanUp = () => {
  if (!keep) rmSync(scratch, { recursive: true, force: true });
};
process.on('exit', cleanUp);
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    cleanUp();
    process.exit(130);
  });
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;
console.log(`# faultline perf run${quick ? ' (--quick: reduced sizes, not for RESULTS.md)' : ''}, ${new Date().toISOString()}`);
console.log(`node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}\n`);
const times = [];
const runStarted = Date.now();
for (const file of files) {
  process.stderr.write(`perf: ${file} ...\n`);
  const started = Date.now();
  try {
    const bench = await import(pathToFileURL(join(here, file)).href);
    const result = await bench.run();
    const ms = Date.now() - started;
    times.push([file, seconds(ms), 'ok']);
    console.log(`## ${result.title} (${file}, ${seconds(ms)})\n`);
    console.log(result.markdown);
    console.log('');
  } catch (error) {
    const ms = Date.now() - started;
    const message = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    times.push([file, seconds(ms), `failed: ${message}`]);
    console.log(`## ${file}: failed after ${seconds(ms)}\n\n${message}\n`);
  }
  process.stderr.write(`perf: ${file} took ${times.at(-1)[1]}\n`);
}

console.log(`## Time per benchmark\n`);
console.log(['| benchmark | time | result |', '|---|---|---|', ...times.map((t) => `| ${t.join(' | ')} |`), `| total | ${seconds(Date.now() - runStarted)} | |`].join('\n'));
if (keep) console.log(`\nGenerated data kept in ${scratch}`);
process.exitCode = times.some((t) => t[2] !== 'ok') ? 1 : 0;
