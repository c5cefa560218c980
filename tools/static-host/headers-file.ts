// The `_headers` file that Netlify and Cloudflare Pages read from a build: which response headers
// go with which paths. The static host applies the build's copy, so `npm start` sends what those
// hosts would send.
//
// The part of the format this site uses: a line with a URL path starts a rule (`*` matches
// anything, `:name` one path segment), the indented `Name: value` lines below it are its headers,
// and `#` starts a comment. Every rule whose path matches adds its headers; a header a rule
// names twice is sent once, its values joined by commas, as both hosts document. The hosts part
// where two matching rules name the same header: Cloudflare Pages joins their values, Netlify
// keeps one. Such a file means different things on each, so it is refused here.

export interface HeaderRule {
  /** The path as written, to name it in an error. */
  source: string;
  path: RegExp;
  headers: [name: string, value: string][];
}

export function parseHeadersFile(text: string): HeaderRule[] {
  const rules: HeaderRule[] = [];
  for (const [index, line] of text.split(/\r?\n/).entries()) {
    const content = line.trim();
    if (content === "" || content.startsWith("#")) continue;
    if (!/^\s/.test(line)) {
      rules.push({ source: content, path: pathPattern(content), headers: [] });
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

/**
 * The headers of every rule whose path matches, by lower-case name. Throws when two of those
 * rules name the same header, which the hosts read differently.
 */
export function headersFor(rules: HeaderRule[], pathname: string): Record<string, string> {
  const found = new Map<string, { rule: HeaderRule; value: string }>();
  for (const rule of rules) {
    if (!rule.path.test(pathname)) continue;
    for (const [name, value] of rule.headers) {
      const key = name.toLowerCase();
      const earlier = found.get(key);
      if (earlier && earlier.rule !== rule) {
        throw new Error(
          `_headers: ${name} for ${pathname} comes from two rules, ${earlier.rule.source} and ${rule.source}; ` +
            "Cloudflare Pages would send both values and Netlify one: name it in one rule only.",
        );
      }
      found.set(key, { rule, value: earlier ? `${earlier.value}, ${value}` : value });
    }
  }
  return Object.fromEntries([...found].map(([key, { value }]) => [key, value]));
}
