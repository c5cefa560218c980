// PostgREST's error answers (Error.hs): the body, its headers, and the status for a SQLSTATE.
import { jsonResponse, ResponseError } from "../http-response.ts";

interface ErrorExtras {
  details?: string | null;
  hint?: string | null;
  headers?: Record<string, string>;
}

export function postgrestError(
  status: number,
  code: string,
  message: string,
  { details = null, hint = null, headers = {} }: ErrorExtras = {},
): ResponseError {
  // Keys in alphabetical order and absent values as null, as PostgREST encodes them.
  const body = { code, details, hint, message };
  return new ResponseError(
    jsonResponse(status, body, {
      "Proxy-Status": `PostgREST; error=${code}`,
      ...(status === 401 ? { "WWW-Authenticate": "Bearer" } : {}),
      ...headers,
    }),
  );
}

/** The role PostgREST runs requests without a signed-in user as; errors tell it apart. */
export const ANON_ROLE = "anon";

/** The fields node-postgres's DatabaseError carries from Postgres' error report. */
interface PostgresError {
  code: string;
  message: string;
  detail?: string;
  hint?: string;
}

export function isPostgresError(error: unknown): error is PostgresError {
  return (
    error instanceof Error &&
    typeof (error as Partial<PostgresError>).code === "string" &&
    "severity" in error
  );
}

/** PostgREST's answer to an error raised by Postgres, as seen by `role`. */
export function fromPostgresError(error: PostgresError, role: string): ResponseError {
  if (error.code === RAISED_RESPONSE_CODE) return raisedResponse(error);
  return postgrestError(statusFor(error, role !== ANON_ROLE), error.code, error.message, {
    details: error.detail ?? null,
    hint: error.hint ?? null,
  });
}

/**
 * `raise sqlstate 'PGRST' using message = '{"code":…,"message":…,"details":…,"hint":…}',
 * detail = '{"status":…,"headers":{…}}'`: SQL chooses the whole answer (Error.hs, parseRaisePGRST).
 */
const RAISED_RESPONSE_CODE = "PGRST";

function raisedResponse({ message, detail }: PostgresError): ResponseError {
  const body = parseObject(message);
  const answer = detail === undefined ? null : parseObject(detail);
  const parseError = (details: string, hint: string) =>
    postgrestError(500, "PGRST121", "Could not parse JSON in the \"RAISE SQLSTATE 'PGRST'\" error", {
      details,
      hint,
    });
  if (!body || typeof body.code !== "string" || typeof body.message !== "string") {
    return parseError(
      `Invalid JSON value for MESSAGE: '${message}'`,
      "MESSAGE must be a JSON object with obligatory keys: 'code', 'message' and optional keys: 'details', 'hint'.",
    );
  }
  const detailHint =
    "DETAIL must be a JSON object with obligatory keys: 'status', 'headers' and optional key: 'status_text'.";
  if (detail === undefined) return parseError("DETAIL is missing in the RAISE statement", detailHint);
  if (!answer || typeof answer.status !== "number" || !isStringRecord(answer.headers)) {
    return parseError(`Invalid JSON value for DETAIL: '${detail}'`, detailHint);
  }
  return postgrestError(answer.status, body.code, body.message, {
    details: typeof body.details === "string" ? body.details : null,
    hint: typeof body.hint === "string" ? body.hint : null,
    headers: answer.headers,
  });
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

function isStringRecord(value: unknown): value is Record<string, string> {
  return (
    typeof value === "object" &&
    value !== null &&
    Object.values(value).every((item) => typeof item === "string")
  );
}

/**
 * PostgREST's mapSQLtoHTTP: a full SQLSTATE or its two-character class, first match wins;
 * anything else is the client's fault (400).
 */
const STATUS_BY_SQLSTATE: ReadonlyArray<[codeOrClass: string, status: number]> = [
  ["08", 503], // connection exception
  ["09", 500], // triggered action exception
  ["0L", 403], // invalid grantor
  ["0P", 403], // invalid role specification
  ["23503", 409], // foreign_key_violation
  ["23505", 409], // unique_violation
  ["25006", 405], // read_only_sql_transaction
  ["25", 500], // invalid transaction state
  ["28", 403], // invalid authorization specification
  ["2D", 500], // invalid transaction termination
  ["38", 500], // external routine exception
  ["39", 500], // external routine invocation exception
  ["3B", 500], // savepoint exception
  ["40", 500], // transaction rollback
  ["53400", 500], // configuration_limit_exceeded
  ["53", 503], // insufficient resources
  ["54", 500], // program limit exceeded
  ["55", 500], // object not in prerequisite state
  ["57P01", 503], // admin_shutdown
  ["57", 500], // operator intervention, e.g. 57014 statement timeout
  ["58", 500], // system error
  ["F0", 500], // configuration file error
  ["HV", 500], // foreign data wrapper error
  ["P0001", 400], // raise_exception
  ["P0", 500], // PL/pgSQL error
  ["XX", 500], // internal error
  ["42883", 404], // undefined_function
  ["42P01", 404], // undefined_table
  ["42P17", 500], // invalid_object_definition (infinite recursion in a policy)
];

function statusFor({ code, message }: PostgresError, authed: boolean): number {
  if (code === "42501") return authed ? 403 : 401; // insufficient_privilege
  // A JWT naming a role that does not exist.
  if (code === "22023" && message.startsWith("role") && message.endsWith("does not exist")) return 401;
  if (code === "21000") return message.endsWith("requires a WHERE clause") ? 400 : 500;
  // `raise sqlstate 'PT404'` picks the status itself.
  if (code.startsWith("PT")) return Number(code.slice(2)) || 500;
  return STATUS_BY_SQLSTATE.find(([prefix]) => code.startsWith(prefix))?.[1] ?? 400;
}
