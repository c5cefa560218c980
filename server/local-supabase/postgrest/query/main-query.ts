// The query stage (PostgREST's Query.hs, mainQuery): the plan's statement run in the request's
// own transaction, as the request's role (transaction.ts), its one row of results read back.
import type { Plan } from "../plan.ts";
import type { ApiRequest } from "../request/api-request.ts";
import type { StatementResult } from "./statements.ts";
import type { RequestContext, RequestRunner } from "./transaction.ts";

/** A count is a bigint, which drivers may hand over as text. */
type RawStatementResult = Omit<StatementResult, "page_total" | "total_result_set"> & {
  page_total: number | string;
  total_result_set: number | string | null;
};

export function mainQuery(
  plan: Plan,
  request: ApiRequest,
  runRequest: RequestRunner,
): Promise<StatementResult> {
  return runRequest(requestContext(request), async (db) => {
    const { rows } = await db.query<RawStatementResult>(plan.statement.text, plan.statement.params);
    const { page_total, total_result_set, body } = rows[0]!;
    return {
      page_total: Number(page_total),
      total_result_set: total_result_set === null ? null : Number(total_result_set),
      body,
    };
  });
}

/** The request as PostgREST hands it to the database: headers without the cookie, cookies apart. */
function requestContext({ method, path, headers, identity }: ApiRequest): RequestContext {
  const { cookie, ...otherHeaders } = headers;
  return { ...identity, method, path, headers: otherHeaders, cookies: parseCookies(cookie) };
}

function parseCookies(header: string | undefined): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const pair of header?.split(";") ?? []) {
    const equals = pair.indexOf("=");
    if (equals > 0) cookies[pair.slice(0, equals).trim()] = pair.slice(equals + 1).trim();
  }
  return cookies;
}
