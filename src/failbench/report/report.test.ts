import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { createToolCatalog } from '../../tools/index.js';
import { lostReplyScenario, outageScenario, patientAgent, rateLimitScenario, resendAgent } from '../bench.test-helpers.js';
import { createNaiveAgent } from '../agents/naive.js';
import { createRobustAgent } from '../agents/robust.js';
import { runSuite, type SuiteResult } from '../runner.js';
import { loadScenarios } from '../scenario-loader.js';
import { scoreSuite, type AgentScore } from '../score.js';
import { ModelEndpointError } from '../../llm/model-endpoint-error.js';
import type { Agent } from '../types.js';
import { changedState } from './changed-state.js';
import { escapeHtml } from '../../core/escape-html.js';
import { renderHtml } from './html.js';
import { escapeMarkdown, renderMarkdown } from './markdown.js';
import { costliestRuns, heatmap, NO_FAULT } from './report-data.js';
import { readResults, writeReport } from './write-report.js';

const SCRIPT = '<script>alert(1)</script>';
const ATTR = '"><img src=x onerror=alert(2)>';

const dir = mkdtempSync(join(tmpdir(), 'faultline-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Posts hostile text, then answers with more of it: every recorded string a report shows is hostile. */
const hostileAgent: Agent = {
  name: `evil${ATTR}`,
  async run(task) {
    await task.callTool('send_message', { channel: 'general', text: SCRIPT });
    await task.callTool('send_message', { channel: 'general', text: ATTR });
    return { status: 'completed', answer: `${SCRIPT} ${ATTR}`, diagnoses: [{ tool: `send_message${ATTR}`, category: 'network', note: SCRIPT }] };
  },
};

/** Its model endpoint fails its first run with a hostile message (what an endpoint says is untrusted too); then it gives up. */
function hostileEndpointAgent(): Agent {
  let runs = 0;
  return {
    name: 'model',
    async run() {
      if (runs++ === 0) throw new ModelEndpointError('openai', { kind: 'server', status: 502, message: `HTTP 502: ${SCRIPT}` }, 4);
      return { status: 'gave_up', answer: 'no', diagnoses: [] };
    },
  };
}

async function hostileSuite(): Promise<{ suite: SuiteResult; scores: AgentScore[] }> {
  const suite = await runSuite({
    scenarios: [
      lostReplyScenario({ id: `test/${ATTR}`, title: `Title ${SCRIPT}`, instruction: SCRIPT }),
      outageScenario(),
      rateLimitScenario(),
    ],
    agents: [hostileAgent, patientAgent(), resendAgent(), hostileEndpointAgent()],
    feedback: 'assisted',
    seed: 1,
    runId: `run${SCRIPT}`,
    version: `0.1.0${ATTR}`,
  });
  return { suite, scores: scoreSuite(suite) };
}

describe('escaping', () => {
  it('escapeHtml leaves no markup, in content or in attributes', () => {
    expect(escapeHtml(`${SCRIPT}${ATTR}'&`)).toBe('&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;&#39;&amp;');
  });

  it('escapeMarkdown leaves no HTML and no table breaks', () => {
    expect(escapeMarkdown(`a|b ${SCRIPT}\nnext *x*`)).toBe('a\\|b &lt;script&gt;alert(1)&lt;/script&gt; next \\*x\\*');
  });

  it('no recorded string reaches either report unescaped', async () => {
    const input = await hostileSuite();
    const html = renderHtml(input);
    const md = renderMarkdown(input);
    for (const text of [html, md]) {
      expect(text).not.toContain('<script');
      expect(text).not.toContain('<img');
      expect(text).not.toContain('onerror=alert(2)>');
    }
    // ...but the text is all there, escaped.
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('evil&quot;&gt;&lt;img src=x onerror=alert(2)&gt;');
    expect(md).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    // The run lost to the endpoint is listed apart, with what the endpoint said, escaped.
    expect(html).toContain('<h2>Runs lost to the model endpoint</h2>');
    expect(html).toContain(`<li>test/${escapeHtml(ATTR)} (repeat 1): openai, HTTP 502: &lt;script&gt;alert(1)&lt;/script&gt; (4 attempts)</li>`);
    expect(md).toContain('## Runs lost to the model endpoint');
    expect(md).toMatch(/^\| Runs lost to the model endpoint \(not scored\) \| 0 \| 0 \| 0 \| 1 \|$/m);
    expect(costliestRuns(input.scores.find((s) => s.agent === 'model')!, input.suite.results).map((r) => r.result.scenarioId)).not.toContain(`test/${ATTR}`);
    expect(heatmap('model', input.suite.results).counts[NO_FAULT]).toMatchObject({ error: 0 });
  });
});

describe('report content', () => {
  it('shows metadata, every dimension per agent, the heatmap and the worst runs with their calls', async () => {
    const input = await hostileSuite();
    const md = renderMarkdown(input);
    expect(md).toContain('| run | faultline | seed | agents | transport | feedback |');
    expect(md).toMatch(/\| Failure identification \(assisted\) \|/);
    for (const label of ['Recovery', 'Loop avoidance', 'Semantic self-verification', 'Idempotency safety', 'Retry-After compliance', 'Duplicate-execution rate', 'Faults absorbed by the runtime']) {
      expect(md).toContain(`| ${label}`);
    }
    expect(md).toContain('## Fault kind by outcome');
    expect(md).toMatch(/\| commit\\_then\\_drop \|/);
    // The resending agent's duplicate shows up in its worst run, call by call.
    expect(md).toContain('1. +0.0s send\\_message({"channel":"general","text":"deploy done"}) → TIMEOUT \\[injected: commit\\_then\\_drop\\]');
    expect(md).toContain('Assisted mode');
    const html = renderHtml(input);
    expect(html).toContain('<svg');
    expect(html).toMatch(/<td class="num" style="background:rgba\(/);
  });

  it('puts the overall score first, then where the points went and the rules, the run metadata and the catalogue last', async () => {
    const input = await hostileSuite();
    for (const text of [renderMarkdown(input), renderHtml(input)]) {
      const at = (needle: string) => {
        const i = text.indexOf(needle);
        expect(i, needle).toBeGreaterThanOrEqual(0);
        return i;
      };
      const html = text.includes('<h2>');
      const headings = ['Overall score', 'Where the points went', 'Scoring rules and failable coverage', 'Fault kind by outcome', 'Run', ...(html ? ['Scenarios'] : [])];
      const order = headings.map((h) => at(html ? `<h2>${h}</h2>` : `## ${h}\n`));
      expect([...order].sort((a, b) => a - b)).toEqual(order);
      // The rules, with the weights and, per agent, failable / scored runs.
      expect(text).toContain('Needless calls');
      expect(text).toMatch(/0\.30/);
      expect(text).toMatch(/1\/1 \(100\.0%\)/);
    }
    const html = renderHtml(input);
    expect(html).toMatch(/<details id="catalogue"><summary>Scenario catalogue \(3 scenarios\)<\/summary><table>/);
    // The patient agent's costly lost-reply run says why, and its calls fold away.
    expect(html).toContain('Recovery: status gave_up is not one of completed');
    expect(html).toMatch(/<details><summary>\d+ calls?<\/summary><pre class="calls">/);
  });

  it('heatmap rows are the injected fault kinds, columns how the run ended', async () => {
    const { suite, scores } = await hostileSuite();
    const h = heatmap('patient', suite.results);
    // The patient agent never called send_message in the lost-reply scenario, so no fault fired there.
    expect(h.kinds).toEqual(['http_status', NO_FAULT]);
    // The outage (gave up, as expected) and the 429 (completed) both injected http_status.
    expect(h.counts['http_status']).toMatchObject({ 'gave_up/pass': 1, 'completed/pass': 1, 'completed/fail': 0 });
    expect(h.counts[NO_FAULT]).toMatchObject({ 'gave_up/fail': 1 });
    // The lost-reply run failed (it never posted); in the 429 run the runtime absorbed the fault, so the agent had nothing to identify.
    const patient = scores.find((s) => s.agent === 'patient')!;
    const costly = costliestRuns(patient, suite.results);
    expect(costly.map((r) => r.result.scenarioId).sort()).toEqual([`test/${ATTR}`, 'test/weather-429']);
    expect(costly[0]!.cost).toBeGreaterThanOrEqual(costly[1]!.cost);
    expect(costly.find((r) => r.result.scenarioId === `test/${ATTR}`)!.why).toEqual([
      'Recovery: status gave_up is not one of completed',
      'Idempotency safety: the write the task needs did not happen as often as it needs: expected 1 messages where {"channel":"general","text":"deploy done"} created during the run, found 0',
    ]);
  });

  it('writes results.json, report.md and report.html, and reads the run back', async () => {
    const { suite, scores } = await hostileSuite();
    const out = join(dir, 'written');
    const written = await writeReport(out, suite, scores);
    expect(readFileSync(written.markdown, 'utf8')).toBe(renderMarkdown({ suite, scores }));
    const back = await readResults(out);
    expect(back.suite.meta.runId).toBe(suite.meta.runId);
    expect(back.scores.map((s) => s.agent)).toEqual(suite.meta.agents);
    // Saved states keep only what the run changed: here, the messages it posted.
    const posted = back.suite.results.find((r) => r.agent === 'resend' && r.scenarioId === `test/${ATTR}`)!.state;
    expect(posted.messages.map((m) => [m.text, m.source])).toEqual([
      ['deploy done', 'tool'],
      ['deploy done', 'tool'],
    ]);
    expect(posted.orders).toEqual([]);
    expect(posted.products).toEqual([]);
    expect(posted.duplicates.messages.extra).toBe(1);
    await expect(readResults(join(dir, 'missing'))).rejects.toThrow(/no FailBench run at/);
    await expect(readResults(written.markdown)).rejects.toThrow(/is not JSON/);
  });
});

const CHROMIUM = '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
const skipBrowser = !haveChromium && process.env['CI'] !== 'true';
if (skipBrowser) console.warn(`report.test.ts: skipping the headless-Chromium test: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe('report.html in headless Chromium', () => {
  it.skipIf(skipBrowser)('renders without running a script or making a request', { timeout: 60_000 }, async () => {
    const { chromium } = await import('playwright-core');
    const input = await hostileSuite();
    const out = join(dir, 'browser');
    const written = await writeReport(out, input.suite, input.scores);
    const url = pathToFileURL(written.html).href;
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync'],
    });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      const dialogs: string[] = [];
      const requests: string[] = [];
      const consoleErrors: string[] = [];
      page.on('dialog', (dialog) => {
        dialogs.push(dialog.message());
        void dialog.dismiss();
      });
      page.on('request', (request) => requests.push(request.url()));
      page.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
      await page.goto(url, { waitUntil: 'load' });
      // A string, evaluated in the page: the project compiles without the DOM library.
      const dom = (await page.evaluate(`({
        active: document.querySelectorAll('script, img, iframe, object, embed, link, base').length,
        title: document.title,
        text: document.body.innerText,
        svgs: document.querySelectorAll('svg rect').length,
      })`)) as { active: number; title: string; text: string; svgs: number };
      await page.screenshot({ path: join(tmpdir(), 'failbench-report.png'), fullPage: true });
      expect(dialogs).toEqual([]);
      expect(requests).toEqual([url]);
      expect(consoleErrors).toEqual([]);
      expect(dom.active).toBe(0);
      expect(dom.title).toBe(`FailBench report run${SCRIPT}`);
      // The hostile strings are shown as text.
      expect(dom.text).toContain(SCRIPT);
      expect(dom.text).toContain(ATTR);
      expect(dom.svgs).toBeGreaterThan(10);
    } finally {
      await browser.close();
    }
  });
});

describe('report.html of the default suite in headless Chromium', () => {
  it.skipIf(skipBrowser)('opens on the overall score, with the scenario catalogue folded away', { timeout: 300_000 }, async () => {
    const { chromium } = await import('playwright-core');
    const scenarios = await loadScenarios(fileURLToPath(new URL('../scenarios/default', import.meta.url)));
    const suite = await runSuite({ scenarios, agents: [createNaiveAgent(), createRobustAgent()], feedback: 'raw', seed: 1 });
    const written = await writeReport(join(dir, 'default-suite'), suite, scoreSuite(suite));
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
      await page.goto(pathToFileURL(written.html).href, { waitUntil: 'load' });
      const layout = `({ height: document.documentElement.scrollHeight, first: document.querySelector('h2').textContent, open: document.getElementById('catalogue').open, rows: document.querySelectorAll('#catalogue tr').length })`;
      const folded = (await page.evaluate(layout)) as { height: number; first: string; open: boolean; rows: number };
      await page.screenshot({ path: join(tmpdir(), 'failbench-default-report.png') });
      await page.evaluate(`document.getElementById('catalogue').open = true`);
      const unfolded = (await page.evaluate(layout)) as { height: number };
      expect(folded.first).toBe('Overall score');
      expect(folded.open).toBe(false);
      expect(folded.rows).toBe(scenarios.length + 1);
      // Folded, the catalogue of every scenario is one line: most of the page is gone.
      expect(folded.height).toBeLessThan(unfolded.height / 2);
    } finally {
      await browser.close();
    }
  });
});

describe('changedState', () => {
  it('is empty for an untouched catalog and keeps new and changed entities', () => {
    const fresh = createToolCatalog({ seed: 3 }).state.snapshot();
    const untouched = changedState(fresh);
    for (const key of ['orders', 'products', 'messages', 'events', 'payments', 'refunds', 'files'] as const) expect(untouched[key]).toEqual([]);
    const after = createToolCatalog({ seed: 3 }).state.snapshot();
    after.products[0]!.stock -= 1;
    after.messages.push({ ...after.messages[0]!, message_id: 'MSG-999999', source: 'tool' });
    const changed = changedState(after);
    expect(changed.products.map((p) => p.sku)).toEqual([after.products[0]!.sku]);
    expect(changed.messages.map((m) => m.message_id)).toEqual(['MSG-999999']);
    expect(changed.calls).toEqual(after.calls);
  });
});
