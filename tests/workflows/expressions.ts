// GitHub's expressions (`${{ … }}`, and the bare ones of `if:`), evaluated as GitHub's docs
// ("Evaluate expressions in workflows and actions") describe them, as far as this repository's
// workflows use them: literals, contexts' properties by dotted path, `!`, `==`, `!=`, `&&`, `||`,
// parentheses, and the status functions. Anything else is refused, so that a new kind of
// expression cannot pass a test unevaluated.
//
// What GitHub does and a plain reading would not: `==` ignores the case of strings; operands of
// different types are compared as numbers (null, false and '' are 0), so a missing output equals '';
// `a || b` is the first truthy operand itself, not a boolean; and an `if:` that calls no status
// function is `success() && (…)`.

/** What an expression reads: `github`, `secrets`, `vars`, `steps`, `needs`… */
export type Contexts = Record<string, unknown>;

/** The job's state, for the status functions. */
export interface Status {
  /** Whether a step before has failed. */
  failed: boolean;
}

type Value = string | number | boolean | null | object;

type Token =
  { kind: "string"; value: string } | { kind: "word"; value: string } | { kind: "op"; value: string };

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < source.length) {
    const rest = source.slice(at);
    const space = /^\s+/.exec(rest);
    if (space) {
      at += space[0].length;
      continue;
    }
    const string = /^'((?:[^']|'')*)'/.exec(rest);
    if (string) {
      tokens.push({ kind: "string", value: string[1]!.replaceAll("''", "'") });
      at += string[0].length;
      continue;
    }
    const op = /^(==|!=|&&|\|\||!|\(|\))/.exec(rest);
    if (op) {
      tokens.push({ kind: "op", value: op[0] });
      at += op[0].length;
      continue;
    }
    const word = /^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*(?:\(\))?|^-?\d+(?:\.\d+)?/.exec(rest);
    if (!word) throw new Error(`an expression this test cannot evaluate: ${source}`);
    tokens.push({ kind: "word", value: word[0] });
    at += word[0].length;
  }
  return tokens;
}

const truthy = (value: Value) =>
  !(value === null || value === false || value === 0 || value === "" || Number.isNaN(value));

function asNumber(value: Value): number {
  if (value === null) return 0;
  if (typeof value === "boolean") return value ? 1 : 0;
  if (typeof value === "number") return value;
  if (typeof value === "string") return value.trim() === "" ? 0 : Number(value);
  return Number.NaN;
}

function equal(a: Value, b: Value): boolean {
  if (typeof a === "string" && typeof b === "string") return a.toLowerCase() === b.toLowerCase();
  if (typeof a === "object" && a !== null) return a === b;
  return asNumber(a) === asNumber(b);
}

const STATUS_FUNCTIONS = ["success()", "failure()", "always()", "cancelled()"];

/** The value of `expression` (with or without its `${{ }}`). */
export function evaluate(expression: string, contexts: Contexts, status: Status = { failed: false }): Value {
  const source = /^\s*\$\{\{([\s\S]*)\}\}\s*$/.exec(expression)?.[1] ?? expression;
  const tokens = tokenize(source);
  let at = 0;
  const peek = () => tokens[at];
  const refuse = (): never => {
    throw new Error(`an expression this test cannot evaluate: ${source}`);
  };

  const primary = (): Value => {
    const token = tokens[at++] ?? refuse();
    if (token.kind === "string") return token.value;
    if (token.kind === "op") {
      if (token.value !== "(") refuse();
      const value = or();
      if (tokens[at++]?.value !== ")") refuse();
      return value;
    }
    const word = token.value;
    if (word.endsWith("()")) {
      if (word === "success()") return !status.failed;
      if (word === "failure()") return status.failed;
      if (word === "always()") return true;
      if (word === "cancelled()") return false;
      return refuse();
    }
    if (/^-?\d/.test(word)) return Number(word);
    if (word === "true" || word === "false") return word === "true";
    if (word === "null") return null;
    const [name, ...path] = word.split(".");
    if (!(name! in contexts)) refuse();
    let value: unknown = contexts[name!];
    for (const key of path) value = (value as Record<string, unknown> | null | undefined)?.[key];
    return value === undefined ? null : (value as Value);
  };
  const not = (): Value => {
    if (peek()?.value === "!") {
      at++;
      return !truthy(not());
    }
    return primary();
  };
  const comparison = (): Value => {
    const left = not();
    const op = peek()?.value;
    if (op === "==" || op === "!=") {
      at++;
      const same = equal(left, not());
      return op === "==" ? same : !same;
    }
    return left;
  };
  const and = (): Value => {
    let value = comparison();
    while (peek()?.value === "&&") {
      at++;
      const right = comparison();
      value = truthy(value) ? right : value;
    }
    return value;
  };
  const or = (): Value => {
    let value = and();
    while (peek()?.value === "||") {
      at++;
      const right = and();
      value = truthy(value) ? value : right;
    }
    return value;
  };

  const value = or();
  if (at !== tokens.length) refuse();
  return value;
}

/** Whether a step or job runs, by its `if:` (none: only while nothing has failed). */
export function runs(condition: string | undefined, contexts: Contexts, status: Status): boolean {
  if (condition === undefined) return !status.failed;
  const callsStatus = STATUS_FUNCTIONS.some((call) => condition.includes(call));
  return truthy(evaluate(condition, contexts, status)) && (callsStatus || !status.failed);
}

/** A value as GitHub writes it into a string (an `env:` entry): null is ''. */
export const asString = (value: Value) =>
  value === null ? "" : typeof value === "object" ? JSON.stringify(value) : String(value);
