/**
 * `search_documents`: full-text search over a seeded corpus of meeting notes, reports and design
 * documents, in English and Chinese, with a date range and sorting. Relevance is a small BM25,
 * so sorting by date instead returns a different (worse) first page: the "wrong sort parameter"
 * semantic error seed 000 describes. Over-narrow filters answer no_results, as real search
 * backends do, rather than an empty 200 that an agent could mistake for "nothing exists".
 */
import type { ToolSpec } from '../runtime/define-tool.js';
import { BusinessError, ParameterError } from '../runtime/tool-errors.js';
import { keyedRandom, pick, randomInt, roundTo } from './seeded-random.js';
import { DAY_MS, formatIsoDate } from './zoned-time.js';

export interface StoredDocument {
  id: string;
  title: string;
  body: string;
  author: string;
  project: string;
  kind: string;
  tags: string[];
  /** UTC ISO instant. */
  created_at: string;
}

interface Project {
  name: string;
  zh: string;
  tags: string[];
  topics: string[];
}

const PROJECTS: readonly Project[] = [
  { name: 'Project X', zh: '项目X', tags: ['project-x', '项目X'], topics: ['checkout redesign', 'payment retries', 'launch readiness', 'latency budget'] },
  { name: 'Apollo', zh: '阿波罗项目', tags: ['apollo'], topics: ['data warehouse migration', 'nightly ETL failures', 'query costs', 'schema versioning'] },
  { name: 'Borealis', zh: '极光项目', tags: ['borealis'], topics: ['mobile onboarding', 'push notification opt-in', 'crash rate', 'A/B test results'] },
  { name: 'Helios', zh: '太阳神项目', tags: ['helios'], topics: ['pricing experiment', 'enterprise plan', 'discount approvals', 'churn analysis'] },
];

/** `count`: documents of this kind per project over the corpus span; meetings happen most often. */
const KINDS = [
  { kind: 'meeting_notes', en: 'meeting notes', zh: '会议记录', tags: ['meeting', '会议'], count: 12 },
  { kind: 'weekly_report', en: 'weekly report', zh: '周报', tags: ['report', '周报'], count: 8 },
  { kind: 'design_doc', en: 'design document', zh: '设计文档', tags: ['design', '设计'], count: 4 },
  { kind: 'postmortem', en: 'incident postmortem', zh: '故障复盘', tags: ['incident', '复盘'], count: 3 },
] as const;

const AUTHORS = ['Li Wei', 'Zhang Min', 'Wang Fang', 'Chen Jie', 'Ana Souza', 'Tom Becker', 'Priya Nair', 'Kenji Sato'];

const SENTENCES = [
  'Decisions: {topic} moves to the next milestone; owners confirmed.',
  'Open questions on {topic} remain; follow up before the next sync.',
  'Metrics for {topic} improved week over week, but the error budget is tight.',
  'Risks: {topic} depends on the platform team; escalation path agreed.',
  '讨论了{topic}的进展，下周继续跟进。',
  'Action items: draft the rollout plan for {topic} and review dashboards.',
];

/** How far back the corpus reaches from the catalog's "now". */
export const CORPUS_DAYS = 180;

export function seedDocuments(seed: number, anchorMs: number): StoredDocument[] {
  const docs: StoredDocument[] = [];
  for (const project of PROJECTS) {
    for (const kind of KINDS) {
      for (let i = 0; i < kind.count; i++) {
        const random = keyedRandom(seed, 'document', project.name, kind.kind, i);
        const topic = pick(random, project.topics);
        // Spread evenly with jitter, so every project has recent and old documents of each kind.
        const slot = Math.floor(CORPUS_DAYS / kind.count);
        const daysAgo = Math.min(CORPUS_DAYS - 1, i * slot + randomInt(random, 0, slot - 1));
        const createdMs = Math.floor((anchorMs - daysAgo * DAY_MS - randomInt(random, 1, 10) * 3_600_000) / 60_000) * 60_000;
        const date = formatIsoDate(createdMs);
        const sentences = [pick(random, SENTENCES), pick(random, SENTENCES), pick(random, SENTENCES)].map((s) => s.replaceAll('{topic}', topic));
        docs.push({
          id: '',
          title: `${project.name} ${kind.en}: ${topic} (${date}) / ${project.zh}${kind.zh}`,
          body: sentences.join(' '),
          author: pick(random, AUTHORS),
          project: project.name,
          kind: kind.kind,
          tags: [...project.tags, ...kind.tags],
          created_at: new Date(createdMs).toISOString(),
        });
      }
    }
  }
  docs.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.title.localeCompare(b.title));
  docs.forEach((d, i) => (d.id = `DOC-${String(i + 1).padStart(4, '0')}`));
  return docs;
}

const HAN = /\p{Script=Han}/u;

/** Lower-cased words; runs of Chinese characters become bigrams, the usual trick without a dictionary. */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (const run of text.toLowerCase().match(/\p{Script=Han}+|(?:(?!\p{Script=Han})[\p{L}\p{N}])+/gu) ?? []) {
    if (!HAN.test(run)) {
      tokens.push(run);
      continue;
    }
    const chars = [...run];
    if (chars.length === 1) tokens.push(run);
    for (let i = 0; i + 1 < chars.length; i++) tokens.push(chars[i]! + chars[i + 1]!);
  }
  return tokens;
}

interface IndexedDocument {
  doc: StoredDocument;
  /** Weighted term frequencies: title x3, tags x2, body x1. */
  terms: Map<string, number>;
  length: number;
}

function indexDocument(doc: StoredDocument): IndexedDocument {
  const terms = new Map<string, number>();
  let length = 0;
  const addAll = (text: string, weight: number) => {
    for (const t of tokenize(text)) {
      terms.set(t, (terms.get(t) ?? 0) + weight);
      length += weight;
    }
  };
  addAll(doc.title, 3);
  addAll(doc.tags.join(' '), 2);
  addAll(doc.body, 1);
  return { doc, terms, length };
}

export interface SearchHit {
  id: string;
  title: string;
  snippet: string;
  author: string;
  project: string;
  tags: string[];
  created_at: string;
  date: string;
  score: number;
}

export interface SearchResult {
  query: string;
  sort_by: 'relevance' | 'date';
  order: 'asc' | 'desc';
  date_from: string | null;
  date_to: string | null;
  total: number;
  offset: number;
  limit: number;
  results: SearchHit[];
}

interface SearchArgs {
  query: string;
  date_from?: string;
  date_to?: string;
  sort_by: 'relevance' | 'date';
  order: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export function documentTools(corpus: readonly StoredDocument[]): ToolSpec<any, unknown>[] {
  const index = corpus.map(indexDocument);
  const documentFrequency = new Map<string, number>();
  for (const entry of index) for (const term of entry.terms.keys()) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
  const averageLength = index.reduce((s, e) => s + e.length, 0) / Math.max(1, index.length);

  function score(entry: IndexedDocument, queryTerms: readonly string[]): { score: number; matched: number } {
    let total = 0;
    let matched = 0;
    for (const term of queryTerms) {
      const tf = entry.terms.get(term);
      if (tf === undefined) continue;
      matched++;
      const df = documentFrequency.get(term) ?? 0;
      const idf = Math.log(1 + (index.length - df + 0.5) / (df + 0.5));
      total += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * entry.length) / averageLength));
    }
    return { score: total, matched };
  }

  const search: ToolSpec<SearchArgs, SearchResult> = {
    name: 'search_documents',
    description:
      'Full-text search over the team\'s documents (meeting notes, weekly reports, design documents, postmortems; English and Chinese). ' +
      'date_from and date_to are inclusive UTC calendar days (YYYY-MM-DD) on the creation date. sort_by "relevance" (default) ranks by match quality; ' +
      '"date" orders by creation time and ignores relevance. order is asc or desc (default desc). ' +
      'Errors: 404 no_results when nothing matches the query and filters (details say how many matches lie outside the date range: widen it); ' +
      '400 boundary_violation when date_from is after date_to, or offset is past the last result. Read-only and idempotent: safe to retry.',
    input: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: 200 },
        date_from: { type: 'string', format: 'date', description: 'First creation day included (UTC), YYYY-MM-DD.' },
        date_to: { type: 'string', format: 'date', description: 'Last creation day included (UTC), YYYY-MM-DD.' },
        sort_by: {
          enum: ['relevance', 'date'],
          default: 'relevance',
          'x-synonyms': { score: 'relevance', relevant: 'relevance', best_match: 'relevance', rank: 'relevance', recency: 'date', newest: 'date', recent: 'date', created: 'date', created_at: 'date', time: 'date', 相关性: 'relevance', 时间: 'date', 日期: 'date' },
        },
        order: { enum: ['asc', 'desc'], default: 'desc', 'x-synonyms': { ascending: 'asc', descending: 'desc', oldest_first: 'asc', newest_first: 'desc', 升序: 'asc', 降序: 'desc' } },
        limit: { type: 'integer', minimum: 1, maximum: 50, default: 10 },
        offset: { type: 'integer', minimum: 0, default: 0 },
      },
      required: ['query'],
      additionalProperties: false,
    },
    output: {
      type: 'object',
      properties: {
        total: { type: 'integer' },
        results: {
          type: 'array',
          items: { type: 'object', properties: { id: { type: 'string' }, title: { type: 'string' }, created_at: { type: 'string' }, score: { type: 'number' } }, required: ['id', 'title', 'created_at', 'score'] },
        },
      },
      required: ['total', 'results'],
    },
    idempotent: true,
    annotations: { title: 'Search documents', readOnlyHint: true, idempotentHint: true, destructiveHint: false, openWorldHint: false },
    execute(args, ctx) {
      const from = args.date_from;
      const to = args.date_to;
      if (from !== undefined && to !== undefined && from > to) {
        throw new ParameterError('boundary_violation', `date_from (${from}) is after date_to (${to})`, {
          code: 'INVALID_DATE_RANGE',
          details: { date_from: from, date_to: to },
        });
      }
      const queryTerms = [...new Set(tokenize(args.query))];
      if (queryTerms.length === 0) {
        throw new ParameterError('boundary_violation', 'the query has no searchable words', { code: 'EMPTY_QUERY', details: { parameter: 'query', received: args.query } });
      }
      const nowIso = new Date(ctx.clock.now()).toISOString();
      const needed = Math.ceil(queryTerms.length / 2);
      const matches: { entry: IndexedDocument; score: number }[] = [];
      let outsideRange = 0;
      for (const entry of index) {
        // Documents "written" after the virtual now do not exist yet.
        if (entry.doc.created_at > nowIso) continue;
        const s = score(entry, queryTerms);
        if (s.matched < needed) continue;
        const day = entry.doc.created_at.slice(0, 10);
        if ((from !== undefined && day < from) || (to !== undefined && day > to)) {
          outsideRange++;
          continue;
        }
        matches.push({ entry, score: s.score });
      }
      if (matches.length === 0) {
        const filtered = from !== undefined || to !== undefined;
        throw new BusinessError('no_results', filtered ? `no documents match "${args.query}" between ${from ?? 'the beginning'} and ${to ?? 'now'}` : `no documents match "${args.query}"`, {
          code: 'NO_RESULTS',
          details: { query: args.query, date_from: from ?? null, date_to: to ?? null, matches_outside_date_range: outsideRange },
        });
      }
      const direction = args.order === 'asc' ? 1 : -1;
      matches.sort((a, b) => {
        const primary = args.sort_by === 'date' ? a.entry.doc.created_at.localeCompare(b.entry.doc.created_at) : a.score - b.score;
        return direction * primary || b.entry.doc.created_at.localeCompare(a.entry.doc.created_at) || a.entry.doc.id.localeCompare(b.entry.doc.id);
      });
      if (args.offset > 0 && args.offset >= matches.length) {
        throw new ParameterError('boundary_violation', `offset ${args.offset} is past the last of ${matches.length} results`, {
          code: 'OFFSET_OUT_OF_RANGE',
          details: { parameter: 'offset', received: args.offset, max: matches.length - 1, total: matches.length },
        });
      }
      return {
        query: args.query,
        sort_by: args.sort_by,
        order: args.order,
        date_from: from ?? null,
        date_to: to ?? null,
        total: matches.length,
        offset: args.offset,
        limit: args.limit,
        results: matches.slice(args.offset, args.offset + args.limit).map(({ entry, score: s }) => ({
          id: entry.doc.id,
          title: entry.doc.title,
          snippet: entry.doc.body.length > 160 ? `${entry.doc.body.slice(0, 157)}...` : entry.doc.body,
          author: entry.doc.author,
          project: entry.doc.project,
          tags: [...entry.doc.tags],
          created_at: entry.doc.created_at,
          date: entry.doc.created_at.slice(0, 10),
          score: roundTo(s, 3),
        })),
      };
    },
  };
  return [search];
}
