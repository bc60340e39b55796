import { describe, expect, it } from 'vitest';
import { openAiTrajectory } from '../trajectory/importers/openai.js';
import { annotateJudged, heuristicSemanticJudge } from './judge/judged-annotation.js';

describe('failureNote', () => {
  it('says in a label what an imported failure was read from', async () => {
    const call = (id: string) => ({ id, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } });
    const t = openAiTrajectory({
      id: 'blind',
      outcome: 'failure',
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: null, tool_calls: [call('c1')] },
        { role: 'tool', tool_call_id: 'c1', content: 'HTTP 401 Unauthorized: token expired' },
        { role: 'assistant', content: null, tool_calls: [call('c2')] },
        { role: 'tool', tool_call_id: 'c2', content: 'HTTP 401 Unauthorized: token expired' },
        { role: 'assistant', content: 'Sorry, the weather service refuses my credentials.' },
      ],
    });
    if (typeof t === 'string') throw new Error(t);
    const { labels } = await annotateJudged(t, heuristicSemanticJudge());
    const blind = labels.find((l) => l.name === 'blind_retry');
    expect(blind?.reason).toContain('(unauthorized, read from text:HTTP 401)');
  });
});
