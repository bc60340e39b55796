/**
 * Failure words in prose ("timed out", "rate limit", "permission", 超时, 限流, 权限), in the
 * languages tool results are commonly written in. The runtime never reads wording, and neither
 * does the rest of this reader: a category taken from here is marked `words:` and capped at a
 * low confidence, and a result whose only sign of failure is its words fails only when it is a
 * short statement (see `read-result.ts`).
 */
import type { Cause } from './signal.js';

/** Word patterns and the cause they suggest, most specific first. Case-insensitive. */
const WORDS: readonly (readonly [RegExp, Cause])[] = [
  [/(?:token|credentials?|session|api key|password|签名|令牌|凭证|会话|登录)\s*(?:has |is |has been |was |已)?(?:expired|过期|失效)|expired (?:token|credentials?|session)|トークン(?:の)?(?:有効期限|期限切れ)/i, { status: 401, type: 'credential_expired' }],
  [/insufficient[_ ]quota|quota (?:exceeded|exhausted)|exceeded (?:your|the) (?:current )?quota|(?:daily |api )?quota limit|配额(?:不足|已用完|用尽|超限)|额度(?:不足|已用完|用尽|超限)|余量不足/i, { status: 429, type: 'quota_exhausted' }],
  [/rate[- _]?limit|too many requests|throttl|slow down|request limit|frequency limit|(?:send|sent|request|call)(?:s|ing)? too (?:fast|frequent)|too frequent|times per (?:second|minute|hour)|qps (?:limit|exceeded)|request count exceeded|flow control|流控|频次|请求过于频繁|请求频率|频率(?:过高|超限|限制)|访问(?:过于)?频繁|操作(?:过于)?频繁|限流|请求过多|次数超限|调用次数|レート制限|リクエストが多すぎ|요청이 너무 많|demasiadas solicitudes|trop de requêtes|zu viele anfragen|muitas requisições/i, { status: 429 }],
  [/gateway time-?out|网关超时/i, { status: 504 }],
  [/timed? ?out|timeout|deadline exceeded|took too long|超时|超時|タイムアウト|시간 초과|tiempo de espera|délai d'attente|zeitüberschreitung|tempo limite/i, { errno: 'ETIMEDOUT' }],
  [/could not resolve|name resolution|no such host|unknown host|域名解析|dns/i, { errno: 'ENOTFOUND' }],
  [/connection (?:was )?(?:reset|closed|aborted)|reset by peer|socket hang up|broken pipe|连接(?:被)?(?:重置|断开|中断)/i, { errno: 'ECONNRESET' }],
  [/connection refused|could not connect|couldn't connect|cannot connect|unable to connect|failed to connect|unreachable|network error|连接(?:被)?拒绝|连接.{0,30}被拒绝|无法连接|连接失败|网络(?:错误|异常|不可达)|接続(?:でき|に失敗)|연결(?:할 수 없|실패)/i, { errno: 'ECONNREFUSED' }],
  [/unauthori[sz]ed|unauthenticated|sign(?:ature)? (?:not match|mismatch|verification failed|error|invalid)|invalid sign(?:ature)?|签名(?:验证)?(?:失败|错误|无效|不匹配|不正确)|expired or revoked|credentials (?:were |are )?(?:not provided|not found|missing|required)|(?:token|api key|credentials?|signature) (?:is )?(?:invalid|not valid)|not authenticated|authentication (?:failed|required|error)|invalid (?:api[ _-]?key|(?:access |auth |bearer |refresh )?token|credentials?|auth)|(?:grant|token|api key) is invalid|bad credentials|not logged in|login required|未授权|未认证|认证失败|鉴权失败|身份验证失败|未登录|登录失效|无效的?(?:令牌|token|密钥|凭证)|(?:令牌|token|密钥|凭证)无效|認証(?:エラー|に失敗)|인증 실패|no autorizado|non autorisé|nicht autorisiert/i, { status: 401 }],
  [/permission|forbidden|access (?:is )?denied|not (?:allowed|allow|permitted|authorized) to|not (?:allowed|permitted)|(?:ip|address) (?:is )?not (?:in )?(?:the )?(?:whitelist|allowlist)|白名单|(?:does not|doesn't) have (?:authori[sz]ation|access)|insufficient (?:privileges?|scopes?|rights)|权限|無權|无权|禁止访问|拒绝访问|访问被拒绝|没有访问|権限|アクセスが拒否|권한|acceso denegado|accès refusé|zugriff verweigert|permiso denegado/i, { status: 403 }],
  [/unknown tool|no such tool|tool .{1,40} (?:not found|does not exist)|method not found|未知(?:的)?工具|工具不存在/i, { rpc: -32601 }],
  [/not found|does not exist|doesn't exist|no such|nonexistent|不存在|未找到|找不到|没有找到|查无|見つかりません|存在しません|찾을 수 없|no encontrad|introuvable|nicht gefunden|não encontrad/i, { status: 404 }],
  [/already exists?|already (?:been )?taken|already in use|conflict|duplicate|已存在|重复|冲突|既に存在|이미 존재/i, { status: 409 }],
  [/insufficient (?:funds|balance)|card (?:was )?declined|payment (?:required|declined|failed)|余额不足|支付失败|扣款失败/i, { status: 402 }],
  [/(?:payload|request|body|input|file|content|message|prompt|string|value|text|argument|query|entity) (?:is )?too (?:large|long|big)|too (?:large|long) (?:for|to be)|exceeds? (?:the )?(?:maximum|max|limit)|context length|out of range|超出(?:范围|限制|最大)|过长|过大/i, { status: 413 }],
  [/invalid|unknown (?:command|parameter|field|argument|option|unit|value|column|key|type|format)|(?:format|param(?:eter)?) error|can(?:'|no)t be (?:blank|empty)|must not be (?:blank|empty|null)|must specify|missing required|is required|required (?:field|parameter|argument)|must be|malformed|validation|bad request|unprocessable|参数(?:错误|有误|无效|不合法|缺失|校验)|缺少(?:必要|必填)?参数|必填|格式(?:错误|不正确)|非法|不合法|无效|パラメータ|不正な|잘못된|inválid|invalide|ungültig/i, { status: 400 }],
  [/overloaded|(?:temporarily |currently )?unavailable|is (?:currently |still )?(?:loading|starting|warming up)|cold start|under maintenance|try again later|service (?:is )?down|服务(?:不可用|暂不可用|繁忙|维护)|系统繁忙|系统维护|稍后(?:再试|重试)|暂时无法|利用できません|일시적으로/i, { status: 503 }],
  [/internal (?:server )?error|server error(?! rates?\b)|system error(?! rates?\b)|out of memory|\bOOM\b|(?:database|table|file) is locked|deadlock|unexpected error|something went wrong|crashed|内部错误|服务器(?:内部)?错误|系统(?:错误|异常)|服务(?:端)?异常|内部エラー|サーバーエラー|서버 오류|시스템 오류|error interno|erreur interne|interner fehler/i, { status: 500 }],
];

/**
 * All the patterns as one expression, each its own group: one scan finds the leftmost match, and
 * at one position the earlier (more specific) pattern, as the list orders them.
 */
const ALL_WORDS = new RegExp(WORDS.map(([pattern]) => `(${pattern.source})`).join('|'), 'i');

/** The failure words nearest the start of `text`, the cause they suggest and where they are, or undefined. */
export function failureWords(text: string): { phrase: string; cause: Cause; at: number } | undefined {
  const m = ALL_WORDS.exec(text);
  if (m === null) return undefined;
  for (let i = 1; i < m.length; i++) if (m[i] !== undefined) return { phrase: m[i]!.toLowerCase(), cause: WORDS[i - 1]![1], at: m.index };
  return undefined;
}

/**
 * Words that say a call failed without saying why ("failed", 失败, エラー). Used only with
 * {@link failureWords} absent, to tell a short failure statement from ordinary text.
 */
export const FAILED_WORDS = /\b(?:failed|failure|unsuccessful|error occurred|went wrong)\b|失败|失敗|出错|报错|错误|錯誤|异常|エラー|오류|실패|fehlgeschlagen|échec|échoué|falló|fallido|falhou/i;

/**
 * Category words that are nouns ("Timeout set to 30s", "Permission set updated"): alone, without
 * a word of failure or negation beside them, they name a setting, not a failure.
 */
export const BARE_NOUNS = new Set(['timeout', 'permission', 'rate limit', 'rate-limit', 'ratelimit', 'rate_limit', 'quota', 'conflict', 'duplicate', 'validation', 'dns', 'throttl', 'frequency limit', 'qps limit', 'quota limit', 'flow control', '权限', '网络', '配额', '额度', '重复', '冲突', '非法', 'must be']);
export const NEGATION = /\b(?:not|no|never|cannot|can't|couldn't|unable|failed|denied|exceeded|error|refused)\b|无法|不能|不可|未|没有|失败|错误|拒绝|不足|超出|超过/i;

/** Words that report success; a short text saying them is not a failure statement. */
export const SUCCESS_WORDS = /\b(?:success(?:ful(?:ly)?)?|succeeded|completed|confirmed|done|created|updated|saved|sent|booked|set to|cancelled successfully)\b|成功|已完成|完成了|已确认|已创建|已更新|已发送/i;
