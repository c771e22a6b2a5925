// The fault workload's client: every answer counted as a success, a refusal by rule, or an error
// (the request may or may not have taken effect).
import type { Answer, RestClient } from "./rest-client.js";

export interface AnswerCounts {
  requests: number;
  succeeded: number;
  refused: number;
  readonly errorsByKind: Record<string, number>;
}

export interface CountingClient {
  call(method: string, path: string, body?: unknown): Promise<Answer>;
  readonly counts: AnswerCounts;
}

/** Counts every answer; network failures (the edge restarting) are answers of status 0. */
export function createCountingClient(raw: RestClient): CountingClient {
  const counts: AnswerCounts = { requests: 0, succeeded: 0, refused: 0, errorsByKind: {} };
  const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    counts.requests++;
    let answer: Answer;
    try {
      answer = await raw.call(method, path, body);
    } catch (err) {
      answer = { status: 0, body: { message: err instanceof Error ? err.message : String(err) } };
    }
    if (answer.status === 200) counts.succeeded++;
    else if (answer.status >= 400 && answer.status < 500 && answer.status !== 408 && answer.status !== 429)
      counts.refused++;
    else {
      const kind = `${answer.status} ${String(answer.body?.message ?? "").slice(0, 60)}`;
      counts.errorsByKind[kind] = (counts.errorsByKind[kind] ?? 0) + 1;
    }
    return answer;
  };
  return { call, counts };
}
