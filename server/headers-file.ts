// The `_headers` file that Netlify and Cloudflare Pages read from a build: which response headers
// go with which paths. The static host applies the build's copy, so `npm start` sends what those
// hosts would send.
//
// The part of the format this site uses: a line with a URL path starts a rule (`*` matches
// anything, `:name` one path segment), the indented `Name: value` lines below it are its headers,
// and `#` starts a comment.

export interface HeaderRule {
  path: RegExp;
  headers: [name: string, value: string][];
}

export function parseHeadersFile(text: string): HeaderRule[] {
  const rules: HeaderRule[] = [];
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const content = line.trim();
    if (content === "" || content.startsWith("#")) continue;
    if (!/^\s/.test(line)) {
      rules.push({ path: pathPattern(content), headers: [] });
      continue;
    }
    const header = content.match(/^([!#$%&'*+.^`|~\w-]+):\s*(.*)$/);
    const rule = rules.at(-1);
    if (!header || !rule)
      throw new SyntaxError(`_headers, line ${index + 1}: not a header of a path: ${line}`);
    rule.headers.push([header[1]!, header[2]!]);
  }
  return rules;
}

function pathPattern(path: string): RegExp {
  const source = path
    .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/:\w+/g, "[^/]+");
  return new RegExp(`^${source}$`);
}

/** The headers of every rule whose path matches; a name given more than once has its values joined. */
export function headersFor(rules: HeaderRule[], pathname: string): Record<string, string> {
  const found = new Map<string, [name: string, value: string]>();
  for (const rule of rules) {
    if (!rule.path.test(pathname)) continue;
    for (const [name, value] of rule.headers) {
      const key = name.toLowerCase();
      const earlier = found.get(key);
      found.set(key, earlier ? [earlier[0], `${earlier[1]}, ${value}`] : [name, value]);
    }
  }
  return Object.fromEntries(found.values());
}
