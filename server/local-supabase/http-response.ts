// The answer to one HTTP request: built by the gateway and the REST layer, written by http.ts.

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export const JSON_CONTENT_TYPE = "application/json; charset=utf-8";

export function jsonResponse(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): HttpResponse {
  return { status, headers: { "Content-Type": JSON_CONTENT_TYPE, ...headers }, body: JSON.stringify(body) };
}

/** Thrown to end a request early with a ready answer: an error, in practice. */
export class ResponseError extends Error {
  readonly response: HttpResponse;

  constructor(response: HttpResponse) {
    super(`HTTP ${response.status} ${response.body}`);
    this.response = response;
  }
}
