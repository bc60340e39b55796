/**
 * The heuristic judge's measured quality, written by `judge-quality.test.ts` from the labelled
 * calls in the repository (corpora/judge, corpora/tau-bench) and the conversations with known
 * outcomes (corpora/logs/outcomes). The test fails when this file no longer matches a fresh
 * measurement; `FAULTLINE_WRITE_JUDGE_QUALITY=1 npx vitest run src/annotate/judge/judge-quality.test.ts`
 * rewrites it. Dataset cards and `faultline review --report` show these figures.
 */

/** A binary classifier's counts on a labelled set: positives are calls that missed the intent. */
export interface ConfusionCounts {
  calls: number;
  misses: number;
  tp: number;
  fp: number;
  fn: number;
  tn: number;
  /** tp / (tp + fp); null when it flagged nothing. */
  precision: number | null;
  /** tp / (tp + fn); null without misses. */
  recall: number | null;
}

export interface HeuristicJudgeQuality {
  /** `semantic_error` labels against calls labelled as missing the intent or not; per labelled set too. */
  semantic_error: ConfusionCounts & { by_set: Record<string, ConfusionCounts> };
  /** Outcomes inferred from final answers, per conversation set (`tuned`: the patterns were developed on it; `held-out`: see the set's README). */
  outcome_inference: Record<string, { right: number; total: number; accuracy: number }>;
}

export const HEURISTIC_JUDGE_QUALITY: HeuristicJudgeQuality = {
  "semantic_error": {
    "calls": 242,
    "misses": 106,
    "tp": 17,
    "fp": 0,
    "fn": 89,
    "tn": 136,
    "precision": 1,
    "recall": 0.16,
    "by_set": {
      "corpora/judge": {
        "calls": 37,
        "misses": 17,
        "tp": 17,
        "fp": 0,
        "fn": 0,
        "tn": 20,
        "precision": 1,
        "recall": 1
      },
      "tau-bench airline": {
        "calls": 205,
        "misses": 89,
        "tp": 0,
        "fp": 0,
        "fn": 89,
        "tn": 116,
        "precision": null,
        "recall": 0
      }
    }
  },
  "outcome_inference": {
    "corpora/logs/outcomes tuned": {
      "right": 66,
      "total": 66,
      "accuracy": 1
    },
    "corpora/logs/outcomes held-out": {
      "right": 15,
      "total": 16,
      "accuracy": 0.938
    },
    "corpora/logs/results tuned": {
      "right": 107,
      "total": 110,
      "accuracy": 0.973
    },
    "corpora/logs/results held-out": {
      "right": 51,
      "total": 52,
      "accuracy": 0.981
    }
  }
};
