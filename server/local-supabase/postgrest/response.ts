// The response stage (PostgREST's Response.hs, actionResponse): the status, headers and body
// of the answer, from the plan and what its statement returned.
import type { HttpResponse } from "../http-response.ts";
import type { Plan } from "./plan.ts";
import type { StatementResult } from "./query/statements.ts";
import { contentRange, readRangeAnswer } from "./ranges.ts";
import type { ApiRequest } from "./request/api-request.ts";
import { preferenceApplied } from "./request/preferences.ts";

const JSON_BODY = "application/json; charset=utf-8";

export function actionResponse(plan: Plan, request: ApiRequest, result: StatementResult): HttpResponse {
  const { preferences, profileHeader } = request;
  if (plan.action === "read") {
    const answer = readRangeAnswer(plan.range, result.page_total, result.total_result_set);
    return {
      status: answer.status,
      headers: {
        "Content-Range": answer.contentRange,
        "Content-Type": JSON_BODY,
        ...profileHeader,
        ...preferenceApplied(preferences, false),
      },
      body: answer.errorBody ?? result.body,
    };
  }
  // Inserts and deletes report no row range; with count=exact, the total is the rows written.
  const representation = preferences.return === "representation";
  const status = plan.action === "insert" ? 201 : representation ? 200 : 204;
  const headers = {
    "Content-Range": contentRange(1, 0, preferences.countExact ? result.page_total : null),
    ...preferenceApplied(preferences, true),
  };
  if (!representation) return { status, headers, body: "" };
  return { status, headers: { ...headers, "Content-Type": JSON_BODY, ...profileHeader }, body: result.body };
}
