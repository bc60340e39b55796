/**
 * How a task ended, read from the agent's closing answer when the log states no outcome (the
 * heuristic judge's outcome inference; DESIGN.md "Importers and annotation"). A closing answer is a speech act:
 * the agent reports the task done ("I've cancelled order #W123", "已为您预订成功"), or it says it
 * could not ("I wasn't able to…", "暂时无法…"), apologises, hands the user over to someone else,
 * reports part of the job done ("100 of 200 so far"), or asks for what it would need to go on.
 * Each sentence is read for those acts, not for words of one domain: the patterns are the
 * grammar of inability, refusal, apology, hand-over, error reports, partial progress, questions
 * back and completion (a perfect or passive of a verb, a state word such as "confirmed"), in
 * English and Chinese. Closing formulas ("let me know if…", "还有什么可以帮您") say nothing either
 * way and are dropped; bracketed asides and what comes before a "but" weigh less. The calls add
 * a weaker prior: an unrecovered failure at the end leans to failure.
 */
import type { Trajectory } from '../../core/trajectory-types.js';
import { isFailed, recoveryOf } from '../step-facts.js';

export interface InferredOutcome {
  outcome: 'success' | 'failure';
  /** In [0, 1]: how far the signals agree. */
  confidence: number;
  /** The signals read, strongest first, as `act:"text"`, for a person to check. */
  evidence: string;
}

interface Act {
  name: string;
  /** Positive: the task was done; negative: it was not. */
  weight: number;
  pattern: RegExp;
}

// Sentences that only close the conversation politely; they carry no outcome.
const CLOSING =
  /^(?:if\b|feel free\b|let me know\b|please let me know\b|don'?t hesitate\b|is there anything\b|anything else\b|have a (?:great|good|nice|wonderful)\b|thank(?:s| you)\b|you'?re welcome\b|hope (?:this|that) helps\b|happy to help\b|如果|若您|如有|若有|有任何|还有(?:什么|其他|别的)|还需要|祝您|感谢|谢谢|希望(?:这|以上)|很高兴)/i;

// An apology for a wait or trouble the agent put the user through is courtesy, not a failure report.
const COURTESY_APOLOGY = /\b(?:sorry|apologi[sz]e)\b[^.]{0,30}\b(?:wait|delay|confusion|inconvenience|trouble|hassle|mix-up|frustration)\b|抱歉让您久等|久等了|给您带来(?:的)?不便/i;

const NEG_AUX = String.raw`(?:can(?:no|'|’)?t|cannot|could(?:n(?:'|’)?t| not)|was(?:n(?:'|’)?t| not)|were(?:n(?:'|’)?t| not)|is(?:n(?:'|’)?t| not)|are(?:n(?:'|’)?t| not)|did(?:n(?:'|’)?t| not)|do(?:n(?:'|’)?t| not)|does(?:n(?:'|’)?t| not)|ha(?:s|ve|d)(?:n(?:'|’)?t| not)|won(?:'|’)?t|will not|am not|'m not)`;

const ACTS: readonly Act[] = [
  // The agent says it could not: the strongest sign the task was not done.
  { name: 'inability', weight: -3, pattern: new RegExp(String.raw`\b(?:i|we)(?:'m|’m| am|'ve|’ve| have| was| were)?\s+(?:\w+\s+)?(?:unable|not able|${NEG_AUX}(?:\s+\w+)?\s+(?:able|manage|succeed|complete|process|find|finish|access|reach|retrieve|get|make|do|book|cancel|update|proceed|help|locate|verify|confirm|perform|carry|fulfil|fulfill|connect|load|fetch|send|create|change|modify|place|submit|issue|apply|reset|add|remove))`, 'i') },
  { name: 'inability', weight: -3, pattern: /\b(?:i|we)\s+(?:couldn['’]t|could not|can['’]t|cannot|wasn['’]t able to|was not able to|weren['’]t able to|am unable to|was unable to|'m unable to|failed to|didn['’]t manage to|did not manage to|don['’]t have (?:permission|access))\b/i },
  { name: 'inability', weight: -3, pattern: /\b(?:unable to|not able to|no way to|not possible to|impossible to|failed to|fails to|could not be|couldn['’]t be|cannot be|can['’]t be)\b/i },
  { name: 'inability', weight: -3, pattern: /无法|没能|未能|没办法|没有办法|做不到|办不到|不能(?:为您|帮您|完成|处理|办理|预订|取消|修改|查询|获取|访问|连接)|[\u4e00-\u9fff](?:不了|不到|不成|不上|不出)(?![解])|没(?:有)?(?:能)?(?:找到|查到|搜到|获取到|拿到|收到|订到|约到)|(?:未|没有?|不)(?:能)?[^，。！？,]{0,6}(?:成功|完成|生效|通过)|失败/ },
  // A request that was turned down: "the refund was declined", "被拒绝".
  { name: 'refused', weight: -3, pattern: /\b(?:was|were|has been|have been|had been|got|is|are|been)\s+(?:\w+\s+)?(?:declined|rejected|denied|refused|blocked)\b|被(?:拒绝|驳回|拒)|(?:拒绝|驳回)了|不(?:允许|支持|予|可以)(?:办理|退款|修改|取消|操作)?/i },
  // The state a write should have reached, denied: "has not been cancelled", "is not confirmed".
  { name: 'not_done', weight: -3, pattern: new RegExp(String.raw`\b(?:${NEG_AUX})\s+(?:yet\s+)?(?:been\s+)?(?:successfully\s+)?(?:\w+ed|done|complete|confirmed|processed|finished|sent|made|set up|taken effect|gone through|go through|work(?:ed)?|possible|allowed|permitted|available|eligible)\b`, 'i') },
  // Something broke on the way, as the agent reports it.
  { name: 'error_report', weight: -2, pattern: /\b(?:encountered|ran into|run into|hit|got|received|returned|getting|experiencing|having)\s+(?:an?\s+|some\s+|the\s+|a few\s+)?(?:\w+\s+){0,2}(?:errors?|issues?|problems?|difficult(?:y|ies)|outage|failure|timeouts?)\b|\bsomething went wrong\b|\b(?:is|are|was|were|seems to be|appears to be)\s+(?:currently\s+|temporarily\s+)?(?:down|unavailable|unreachable|not responding|not working|offline|overloaded|failing)\b|\b(?:timed out|timing out|keeps failing|kept failing)\b/i },
  { name: 'error_report', weight: -2, pattern: /出错|出现(?:了)?(?:错误|问题|异常|故障)|遇到(?:了)?(?:错误|问题|异常|故障)|(?:系统|服务|接口)(?:暂时)?(?:繁忙|异常|故障|不可用|出现问题)|超时|暂时不可用|报错/ },
  // The user is handed over or sent away to finish it themselves.
  { name: 'hand_over', weight: -2, pattern: /\b(?:please\s+)?(?:try again later|retry later|try again in a (?:few|little)|contact (?:our |the |your )?(?:support|customer (?:service|support)|administrator|admin|help ?desk|bank|airline|carrier|it)|reach out to (?:our |the |your )?(?:support|customer|administrator|team)|escalat(?:e|ed|ing)|transfer(?:ring)? you|human agent|live agent|a representative)\b|\byou(?:'ll| will| may| might) (?:need|have) to\b/i },
  { name: 'hand_over', weight: -2, pattern: /稍后(?:再)?(?:试|重试)|请(?:您)?(?:联系|咨询|拨打)|联系(?:客服|管理员|人工|银行|航空公司)|转(?:接)?人工|人工客服|您(?:可能)?需要(?:自行|自己)/ },
  // Part of the job done and the rest left: "100 of 200 tagged so far", "chunk 3 is next".
  { name: 'partial', weight: -4.5, pattern: /\bso far\b|\bthe rest (?:is|are|will|must|still)\b|\b(?:is|are) (?:still )?next\b|\bremaining \w+ (?:are|is|will)\b|\b(?:i|we)(?:'ll| will) need (?:\w+ )?(?:more|another|further)\b|\bstill (?:need|have) to\b/i },
  { name: 'partial', weight: -4.5, pattern: /目前(?:只|仅)|其余(?:的)?[^，。]{0,6}(?:待|排队|稍后)|剩下(?:的)?[^，。]{0,6}(?:待|还|需要)|还需要(?:再)?\d*次|还差|只完成了/ },
  // Asking for what it would need to go on: the task is not done yet.
  { name: 'asks_for_input', weight: -2, pattern: /^(?!(?:do you )?want me\b|would you like\b|shall i\b|should i go ahead\b)(?:which|what|where|who|whose)\b[^?]*\?$|\bis (?:the|that|this|it) [^?]{1,30} (?:right|correct)\?$/i },
  { name: 'asks_for_input', weight: -2, pattern: /\b(?:could|can|would) you (?:please )?(?:provide|confirm|tell|share|send|check|give|clarify|specify|double-check|verify)\b|\bplease (?:provide|confirm|share|send|specify|clarify|double-check|verify|tell me)\b|\bi(?:'ll| will) need (?:your|the|a|more)\b|\bi need (?:your|the|a|more) \w+/i },
  { name: 'asks_for_input', weight: -2, pattern: /请(?:您)?(?:提供|确认|告诉我|补充|核实|检查|重新)|请问您?(?:记得|知道|能|可以|方便|是否)|能否(?:提供|告诉|确认)|麻烦您(?:提供|确认|告诉)|需要您(?:提供|确认)/ },
  { name: 'apology', weight: -1, pattern: /\b(?:sorry|apologi[sz]e|apologies|unfortunately|regret(?:tably)?|afraid)\b/i },
  { name: 'apology', weight: -1, pattern: /抱歉|对不起|不好意思|很遗憾|遗憾的是|非常抱歉|可惜/ },
  // Done: a perfect or passive of a verb, or the state a finished task is in.
  { name: 'completion', weight: 3, pattern: /\b(?:i|we)(?:'ve|’ve| have| just)?\s+(?:now\s+|also\s+|successfully\s+|already\s+|gone ahead and\s+)*(?!tried\b|attempted\b|failed\b|checked\b|looked\b|searched\b|noticed\b|seen\b)(?:\w+ed|sent|made|set|put|found|booked|cancel(?:l)?ed|paid|built|written|got(?:ten)?|done|taken|given|run|sent|kept|held|left|moved)\b/i },
  { name: 'completion', weight: 3, pattern: /\b(?:has|have|had|'s|’s|was|were|is|are)\s+(?:now\s+|also\s+|already\s+)?(?:been\s+)?(?:successfully\s+)(?:\w+ed|sent|made|set|done|paid)\b|\b(?:has|have|'s|’s)\s+(?:now\s+|also\s+|already\s+)?been\s+(?:\w+ed|sent|made|set|done|paid|taken|given|issued|put|held|kept)\b|\bsuccessfully\b|\ball set\b|\b(?:is|are) (?:now )?(?:confirmed|booked|scheduled|complete|completed|done|set|ready|live|active|on (?:its|their) way)\b|\b(?:confirmation|booking|reference|tracking|order|ticket) (?:number|code|id)\b|\b(?:done|completed)[.!]|\b(?:went through|succeeded|worked)\b|^(?:all\s+)?(?:\w+ed|done|sent|set|made)[.!]?$/i },
  { name: 'completion', weight: 3, pattern: /(?:已|已经)(?:为您|帮您|给您|替您|成功)?[^，。！？,.!?]{0,8}(?:成功|完成|预订|预定|取消|更新|发送|创建|修改|提交|安排|退款|办理|处理|添加|删除|支付|下单|设置|改签|退订|开通|重置|发出|寄出|生效)|(?<![未没不])成功|搞定|办好了|好了[，。！]|完成了/ },
  // An answer that hands over what was asked for.
  { name: 'answer', weight: 2, pattern: /\bhere (?:is|are)\b|\bi found\b|\bthe (?:results?|answer|forecast|weather|status|balance|total|price|details?) (?:is|are|for|shows?)\b|\b(?:there (?:is|are)|you have) \d+\b/i },
  { name: 'answer', weight: 2, pattern: /以下是|如下[：:]|为您找到|查到|查询到|结果(?:是|为|如下)|共有\d+|您的(?:订单|余额|预订)(?:是|为|状态)/ },
];

// Weak success: a completion word that a negation right before it turns into a failure.
const NEGATED_COMPLETION = /\b(?:not|never|no longer|yet to be)\s+(?:been\s+)?(?:successfully|confirmed|completed|booked|processed)\b/i;

/** Splits an answer into sentences (English and Chinese punctuation, line breaks, list items). */
function sentencesOf(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+|(?<=[。！？；;])\s*|\n+/u)
    .map((s) => s.replace(/^[\s*\-•\d.)]+/, '').trim())
    .filter((s) => s.length > 0);
}

// "X, but Y": what comes after the contrast is how it ended.
const CONTRAST = /[,，]?\s*\b(?:but|however|although|though|yet)\b|不过|但是|可是|然而|(?<=[，,])但/i;

/** A sentence's clauses around a contrast, each with the share of weight it carries. */
function clausesOf(sentence: string): { text: string; share: number }[] {
  const m = CONTRAST.exec(sentence);
  if (m === null || m.index === 0) return [{ text: sentence, share: 1 }];
  return [
    { text: sentence.slice(0, m.index), share: 0.5 },
    { text: sentence.slice(m.index), share: 1 },
  ];
}

interface Signal {
  act: string;
  weight: number;
  text: string;
}

function signalsOf(sentence: string): Signal[] {
  if (CLOSING.test(sentence)) return [];
  const found: Signal[] = [];
  const seen = new Set<string>();
  const courtesy = COURTESY_APOLOGY.test(sentence);
  for (const act of ACTS) {
    if (seen.has(act.name)) continue;
    const match = act.pattern.exec(sentence);
    if (match === null) continue;
    if (act.name === 'apology' && courtesy) continue;
    // A sentence that says it could not do something is not also a report that it did.
    if (act.weight > 0 && (found.some((f) => f.weight <= -3) || NEGATED_COMPLETION.test(sentence))) continue;
    seen.add(act.name);
    found.push({ act: act.name, weight: act.weight, text: match[0].trim() });
  }
  // "1,000 of the 10,000 done": a count short of the whole is part of the job.
  const part = /(\d[\d,]*)\s+(?:of|out of)\s+(?:the\s+|all\s+)?(\d[\d,]*)\b/i.exec(sentence) ?? /(?:共|总共)?(\d[\d,]*)\s*(?:个|条|张|项)?中(?:的)?(?:只有|仅)?(\d[\d,]*)/.exec(sentence);
  if (part !== null && !seen.has('partial')) {
    const [a, b] = [Number(part[1]!.replace(/,/g, '')), Number(part[2]!.replace(/,/g, ''))];
    const [done, whole] = part[0].includes('中') ? [b, a] : [a, b];
    if (done < whole && found.some((f) => f.weight > 0)) found.push({ act: 'partial', weight: -4.5, text: part[0] });
  }
  return found;
}

// An aside in brackets ("(the first attempt hit a timeout)") tells how it went, not how it ended.
const ASIDE = /\([^()]*\)|（[^（）]*）/g;

// A task that asks whether something is available: "is the API up?", "check whether the
// dashboard is up", "Prüfe den Status des Zahlungsdienstes". Not every task naming a status is
// one: "the status of ticket OPS-4412" asks for data the agent must be able to read.
const STATE_QUESTION = /\b(?:is|are|was|were)\b[^?.]*\b(?:up|down|reachable|available|online|offline|running|working|responding|healthy)\b|\bwhether\b[^.]*\b(?:up|down|reachable|available|online|running|working|responding)\b|\b(?:check|ping|probe)\b[^.]*\b(?:up|down|reachable|available|alive|health|uptime)\b|prüfe? den (?:status|zustand)|(?:服务|系统|接口|网站)(?:是否|有没有)(?:正常|可用|在线|挂)|能否访问|是否可以访问/i;

// Tasks repeat across a log as answers do: each distinct one is tested once (bounded).
const stateQuestions = new Map<string, boolean>();

function asksAboutState(task: string): boolean {
  let asks = stateQuestions.get(task);
  if (asks === undefined) {
    asks = STATE_QUESTION.test(task);
    if (stateQuestions.size >= 4096) stateQuestions.clear();
    stateQuestions.set(task, asks);
  }
  return asks;
}

/** The agent's closing answer: its last assistant turn after the last call's result, if it wrote one. */
export function closingAnswer(trajectory: Trajectory): string | null {
  const closing = trajectory.closing_turns ?? [];
  for (let i = closing.length - 1; i >= 0; i--) if (closing[i]!.role === 'assistant') return closing[i]!.content;
  return null;
}

// Assistants close with stock sentences ("Done. Anything else?") across a whole log: an
// answer's reading is kept (bounded) so that each distinct answer is read once.
const answerCache = new Map<string, readonly Signal[]>();

/** The signals an answer's text gives, by sentence and clause, before the calls' prior. */
function answerSignals(answer: string): readonly Signal[] {
  const cached = answerCache.get(answer);
  if (cached !== undefined) return cached;
  const signals: Signal[] = [];
  const sentences = sentencesOf(answer);
  // The last sentences say how it ended; a problem solved on the way ("the first card was
  // declined, so I used…") is told before them, so later sentences weigh more.
  sentences.forEach((sentence, i) => {
    const late = i >= sentences.length - 2 ? 1 : 0.75;
    const asides = sentence.match(ASIDE) ?? [];
    const main = sentence.replace(ASIDE, ' ');
    for (const clause of clausesOf(main)) for (const s of signalsOf(clause.text)) signals.push({ ...s, weight: s.weight * late * clause.share });
    for (const aside of asides) for (const s of signalsOf(aside.slice(1, -1))) signals.push({ ...s, act: `aside_${s.act}`, weight: s.weight * 0.25 });
  });
  if (answerCache.size >= 4096) answerCache.clear();
  answerCache.set(answer, signals);
  return signals;
}

const clamp = (n: number): number => Math.round(Math.min(0.95, Math.max(0.5, n)) * 100) / 100;

/**
 * The outcome the closing answer and the calls imply, or null when nothing says either way: no
 * closing answer (a conversation cut off after a call tells nothing of how it ended), or
 * signals that cancel out.
 */
export function inferOutcomeFromConversation(trajectory: Trajectory): InferredOutcome | null {
  const answer = closingAnswer(trajectory);
  if (answer === null || answer.trim() === '') return null;
  // A task that asks whether something is up is answered by reporting that it is down, too:
  // errors reported then, and a call that met them, are the answer.
  const aboutState = asksAboutState(trajectory.task_description ?? '');
  const steps = trajectory.steps;
  const lastFailed = steps.length > 0 && isFailed(steps[steps.length - 1]!);
  const unrecovered = steps.some((s, i) => isFailed(s) && recoveryOf(trajectory, i) === undefined);
  const lastTool = steps.length > 0 ? steps[steps.length - 1]!.tool_name : undefined;
  // The inference depends on the answer, these three facts and the last tool's name only, and
  // all of them repeat across a log: each combination is weighed once (bounded).
  const key = `${aboutState ? 1 : 0}${lastFailed ? 1 : 0}${unrecovered ? 1 : 0}${lastTool === undefined ? '' : `${lastTool.length}:${lastTool}`}\u0000${answer}`;
  let inferred = inferences.get(key);
  if (inferred === undefined) {
    inferred = weigh(answer, aboutState, lastFailed, unrecovered, lastTool);
    if (inferences.size >= 4096) inferences.clear();
    inferences.set(key, inferred);
  }
  return inferred === null ? null : { ...inferred };
}

const inferences = new Map<string, Readonly<InferredOutcome> | null>();

function weigh(answer: string, aboutState: boolean, lastFailed: boolean, unrecovered: boolean, lastTool: string | undefined): InferredOutcome | null {
  const signals = answerSignals(answer).map((s) => ({ ...s }));
  if (aboutState) {
    for (const s of signals) if (s.act === 'error_report') s.weight = 0;
  }
  if (lastFailed) signals.push({ act: 'last_call', weight: aboutState ? 0 : -1.5, text: `${lastTool!} failed` });
  else if (unrecovered) signals.push({ act: 'unrecovered_call', weight: -0.5, text: 'a failed call was never recovered' });
  else if (lastTool !== undefined) signals.push({ act: 'last_call', weight: 0.5, text: `${lastTool} succeeded` });
  const said = signals.filter((s) => s.weight !== 0 && s.act !== 'last_call' && s.act !== 'unrecovered_call' && !s.act.startsWith('aside_'));
  // A substantive answer that reports no trouble reads as the task done: after calls that
  // worked, or, for a question about a state, whatever the calls met.
  const substantive = answer.trim().length >= (/[\u3400-\u9fff]/.test(answer) ? 6 : 12);
  if (said.length === 0 && substantive && ((!lastFailed && !unrecovered) || aboutState)) signals.push({ act: 'plain_answer', weight: 1, text: 'an answer that reports no problem' });
  const negative = signals.filter((s) => s.weight < 0).reduce((a, s) => a + s.weight, 0);
  const positive = signals.filter((s) => s.weight > 0).reduce((a, s) => a + s.weight, 0);
  const score = positive + negative;
  if (Math.abs(score) < 1) return null;
  const outcome = score > 0 ? 'success' : 'failure';
  // Agreement sets the confidence: one-sided strong signals high, a close call near 0.5.
  const against = score > 0 ? -negative : positive;
  const confidence = clamp(0.5 + Math.min(Math.abs(score), 4) * 0.1 - against * 0.05);
  const shown = signals.filter((s) => s.weight !== 0).sort((a, b) => Math.abs(b.weight) - Math.abs(a.weight)).map((s) => `${s.act}:${JSON.stringify(s.text)}`);
  return { outcome, confidence, evidence: shown.join(', ') };
}
