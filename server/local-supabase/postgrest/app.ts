// The part of PostgREST (v14) this repository's requests use, as one pipeline, stage by stage as
// PostgREST's App.hs runs them: the request read (request/), the plan made against the schema
// cache (plan.ts), the query run in the request's transaction (query/), the response written
// (response.ts). The database, not this code, decides what each role may do: it only translates
// HTTP to SQL and back.
import { fromPostgresError, isPostgresError } from "./errors.ts";
import { ResponseError, type HttpResponse } from "../http-response.ts";
import { actionPlan } from "./plan.ts";
import { mainQuery } from "./query/main-query.ts";
import type { RequestRunner } from "./query/transaction.ts";
import { userApiRequest, type RestRequest } from "./request/api-request.ts";
import { actionResponse } from "./response.ts";
import type { SchemaCache } from "./schema-cache.ts";

export type RestHandler = (request: RestRequest) => Promise<HttpResponse>;

export function createRestHandler(cache: SchemaCache, runRequest: RequestRunner): RestHandler {
  return async (raw) => {
    try {
      const request = userApiRequest(raw);
      const plan = actionPlan(request, cache);
      const result = await mainQuery(plan, request, runRequest);
      return actionResponse(plan, request, result);
    } catch (error) {
      if (error instanceof ResponseError) return error.response;
      if (isPostgresError(error)) return fromPostgresError(error, raw.identity.role).response;
      throw error;
    }
  };
}
