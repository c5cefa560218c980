// The watch's look at the site (tools/sign-ups/site.ts), against local sites over HTTPS with
// self-signed certificates made here (tests/support/https-site.ts): one valid for months, one
// near its end, one expired; pages for this project and for another; a site down, and none.
import { afterAll, describe, expect, it } from "vitest";
import { checkSite } from "../../tools/sign-ups/site.ts";
import { pageFor, startHttpsSite, type HttpsSite } from "../support/https-site.ts";

const PROJECT = "https://abcdefghijklmnop.supabase.co";
const now = () => new Date();

const sites: HttpsSite[] = [];
afterAll(() => Promise.all(sites.map((site) => site.close())));
async function site(options: Parameters<typeof startHttpsSite>[0]) {
  const started = await startHttpsSite(options);
  sites.push(started);
  return started;
}

describe("checkSite", () => {
  it("a site that answers 200, for this project, its certificate good for months: passes, with no warning", async () => {
    const { url, ca } = await site({ days: 90, page: pageFor(PROJECT) });
    const answer = await checkSite(url, `${PROJECT}/`, { now: now(), ca });
    expect(answer).toMatchObject({ url, status: 200, warnings: [] });
    expect(answer.certificate?.daysLeft).toBeGreaterThanOrEqual(89);
  });

  it("a certificate with fewer than 14 days left: passes, with a warning naming the day", async () => {
    const { url, ca } = await site({ days: 5, page: pageFor(PROJECT) });
    const answer = await checkSite(url, PROJECT, { now: now(), ca });
    expect(answer.warnings).toEqual([
      {
        title: "Site certificate ends soon",
        message: expect.stringMatching(
          /^The site's certificate at https:\/\/localhost:\d+ ends on \d{4}-\d\d-\d\d, in [45] days: .*Renew it/,
        ),
      },
    ]);
  });

  it("an expired certificate: fails, saying when it expired and to renew it", async () => {
    const { url, ca } = await site({ days: -1, page: pageFor(PROJECT) });
    const check = checkSite(url, PROJECT, { now: now(), ca });
    await expect(check).rejects.toThrow(
      /^The site's certificate at https:\/\/localhost:\d+ expired on \d{4}-\d\d-\d\d: browsers refuse the page\. Renew it/,
    );
    await expect(check).rejects.toMatchObject({ title: "Site certificate expired" });
  });

  it("a certificate nobody vouches for: fails as not trusted", async () => {
    const { url } = await site({ days: 90, page: pageFor(PROJECT) });
    await expect(checkSite(url, PROJECT, { now: now() })).rejects.toMatchObject({
      title: "Site certificate not trusted",
      message: expect.stringMatching(
        /is not trusted \((DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)\)/,
      ),
    });
  });

  it.each([404, 503])("a site answering %i: fails as down", async (status) => {
    const { url, ca } = await site({ days: 90, page: "Not here", status });
    await expect(checkSite(url, PROJECT, { now: now(), ca })).rejects.toMatchObject({
      title: "Site down",
      message: `The site at ${url} answered ${status}, not 200: visitors do not see the page. Check the host (its deploys, its logs) and that SITE_URL is the site's address.`,
    });
  });

  it("a page built for another project: fails, naming the project it connects to", async () => {
    const { url, ca } = await site({ days: 90, page: pageFor("https://zyxwvutsrqponmlk.supabase.co") });
    await expect(checkSite(url, PROJECT, { now: now(), ca })).rejects.toMatchObject({
      title: "Site on another project",
      message: expect.stringContaining(
        `does not send sign-ups to ${PROJECT}, the project this job reads (its page connects to 'self' https://zyxwvutsrqponmlk.supabase.co)`,
      ),
    });
  });

  it("nothing listening: fails as unreachable, with the cause", async () => {
    const { url, ca, close } = await startHttpsSite({ days: 90, page: "" });
    await close();
    await expect(checkSite(url, PROJECT, { now: now(), ca })).rejects.toMatchObject({
      title: "Site unreachable",
      message: expect.stringMatching(/^Cannot reach the site at https:\/\/localhost:\d+ \(ECONNREFUSED\)/),
    });
  });
});
