// How `npm run deploy` reads its settings (tools/deploy/settings.ts): given ones checked, missing
// ones named all at once without a terminal, asked for one by one with one (an Asker that answers
// from a list here; the real terminal is terminal.test.ts's), and kept values read back whole.
import { parseEnv } from "node:util";
import { describe, expect, it } from "vitest";
import { quoted, resolveSettings, type Setting } from "../../tools/deploy/settings.ts";

const URL_SETTING: Setting = {
  name: "SITE_URL",
  secret: false,
  where: "the site's address",
  refuse: (value) => (value.startsWith("https://") ? null : "not https."),
};
const TOKEN: Setting = { name: "HOST_TOKEN", secret: true, where: "the host's dashboard" };
const NAMED: Setting = { name: "HOST_NAME", secret: false, where: "any", default: "future-awaits" };

/** An asker that answers from `answers`, in order, and records what it was asked. */
function answering(answers: string[]) {
  const asked: Array<[string, boolean]> = [];
  return {
    asked,
    ask: async (question: string, secret: boolean) => (asked.push([question, secret]), answers.shift() ?? ""),
  };
}

describe("resolveSettings", () => {
  it("names every missing or refused setting at once without a terminal, with where to find it", async () => {
    await expect(
      resolveSettings([URL_SETTING, TOKEN], { SITE_URL: "http://x" }, { root: "/nowhere" }),
    ).rejects.toThrow(/SITE_URL: not https\.\n {2}HOST_TOKEN: not set \(the host's dashboard\)/);
  });

  it("asks for each missing one until it is taken, a secret as a secret", async () => {
    const asker = answering(["http://wrong", "https://example.com", "", "tok"]);
    const values = await resolveSettings([URL_SETTING, TOKEN], {}, { root: "/nowhere", asker });
    expect(values).toEqual({ SITE_URL: "https://example.com", HOST_TOKEN: "tok" });
    expect(asker.asked.map(([question, secret]) => [question.split(" ")[0], secret])).toEqual([
      ["SITE_URL", false],
      ["SITE_URL", false],
      ["HOST_TOKEN", true],
      ["HOST_TOKEN", true],
    ]);
  });

  it("takes a setting's default rather than asking", async () => {
    const asker = answering([]);
    expect(await resolveSettings([NAMED], {}, { root: "/nowhere", asker })).toEqual({
      HOST_NAME: "future-awaits",
    });
    expect(asker.asked).toEqual([]);
  });
});

describe("quoted: a kept value reads back whole", () => {
  it.each([
    ["a connection string", "postgresql://postgres:p%40ss@db.example.co:5432/postgres"],
    ["a single quote", "it's"],
    ["a double quote and a single one", `say "it's"`],
    ["a backslash and a hash", "a\\b#c"],
    ["dollar signs", "$HOME and ${PATH}"],
  ])("%s", (_, value) => {
    expect(parseEnv(`NAME=${quoted(value)}\n`).NAME).toBe(value);
  });

  it("refuses what no quote holds", () => {
    expect(() => quoted("'\"`")).toThrow(/all three quotes/);
    expect(() => quoted("two\nlines")).toThrow(/line break/);
  });
});
