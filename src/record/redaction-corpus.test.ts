/**
 * Leak and false-positive rates of the record redaction path on the secret corpus
 * (corpora/secrets/: gitleaks' rule tests plus faultline's own cases), in three positions: free
 * text, a JSON value, a percent-encoded URL query value. The held-out slice (a fifth of the rules,
 * fixed by a seeded hash before tuning) says how the rules do on formats they were not tuned on.
 * perf/RESULTS.md and DESIGN.md quote the printed rates.
 */
import { describe, expect, it } from 'vitest';
import { describeRates, isHeldOut, isSecretlint, loadCorpus, measureCorpus, POSITIONS, type CorpusRates } from './redaction-corpus.test-helpers.js';

const share = (n: number, of: number) => n / of;

describe('redaction corpus', () => {
  const corpus = loadCorpus();
  // secretlint's snapshot tests, a second source measured apart: its rules are no slice of gitleaks'.
  const secretlint = corpus.filter((s) => isSecretlint(s));
  const gitleaksAndOwn = corpus.filter((s) => !isSecretlint(s));
  const tuned = gitleaksAndOwn.filter((s) => !isHeldOut(s.rule));
  const heldOut = gitleaksAndOwn.filter((s) => isHeldOut(s.rule));

  it('holds both slices of the corpus, each with true and false positives', () => {
    expect(new Set(corpus.map((s) => s.rule)).size).toBeGreaterThan(230);
    for (const slice of [tuned, heldOut]) {
      expect(slice.filter((s) => s.kind === 'tp').length).toBeGreaterThan(1000);
      expect(slice.filter((s) => s.kind === 'fp').length).toBeGreaterThan(100);
    }
  });

  const trueTexts = new Set(corpus.filter((s) => s.kind === 'tp').map((s) => s.sample));

  interface Bounds {
    leak: number;
    changed: number;
    changedAlone: number;
    changedDistinct: number;
  }

  function check(rates: CorpusRates, bounds: Bounds): void {
    for (const p of POSITIONS) {
      const r = rates[p];
      const first = r.leaks.slice(0, 5).map((l) => `${l.rule}: ${l.sample.slice(0, 60)}`);
      expect(share(r.leaked, r.tp), `${p}: leaks such as ${first.join(' | ')}`).toBeLessThanOrEqual(bounds.leak);
      expect(share(r.changed, r.fp), `${p}: false positives changed`).toBeLessThanOrEqual(bounds.changed);
      expect(share(r.changedAlone, r.fpAlone), `${p}: false positives no other rule reports, changed`).toBeLessThanOrEqual(bounds.changedAlone);
      expect(share(r.changedDistinct, r.fpDistinct), `${p}: false positives not also a true positive, changed`).toBeLessThanOrEqual(bounds.changedDistinct);
    }
  }

  // The goals are at most 2% of true positives leaked and at most 10% of false positives changed.
  // Leaks meet theirs on both gitleaks slices. Changed false positives stand at 12-13% on both,
  // and at 8-9% held out for those whose text is not also a true positive: most of those left
  // are real formats (published Google keys, keys of another rule's format) or stand-ins that
  // secretlint's tests count as secrets (`sk_live_AAAA…`), which gitleaks' count as examples
  // (corpora/secrets/README.md).
  it('leaks at most 2% of the tuned true positives in any position', async () => {
    const rates = await measureCorpus(tuned, trueTexts);
    console.log(describeRates('tuned', rates));
    check(rates, { leak: 0.02, changed: 0.13, changedAlone: 0.12, changedDistinct: 0.12 });
  }, 240_000);

  it('on the held-out rules, leaks at most 2% and changes at most a tenth of the false positives not also true ones', async () => {
    const rates = await measureCorpus(heldOut, trueTexts);
    console.log(describeRates('held-out', rates));
    check(rates, { leak: 0.02, changed: 0.13, changedAlone: 0.05, changedDistinct: 0.1 });
  }, 240_000);

  // secretlint's own true positives include stand-ins this project keeps (`hf_xxxx…`, `…EXAMPLE`)
  // and its false positives are whole files, each changed if any line is (a token one character
  // too long, a password in a URL): corpora/secrets/README.md lists them.
  it('on secretlint\'s samples, leaks at most 8% and changes at most 35% of the false positives', async () => {
    const rates = await measureCorpus(secretlint, trueTexts);
    console.log(describeRates('secretlint', rates));
    check(rates, { leak: 0.08, changed: 0.35, changedAlone: 0.35, changedDistinct: 0.35 });
  }, 240_000);
});
