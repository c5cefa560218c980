// GitHub's environments, through its REST API: made by `npm run deploy -- --github`
// (tools/deploy/github.ts), each limited to the default branch, with a required reviewer where
// asked and the plan allows one; and read back as GitHub holds them, by that command and by the
// migrations' gate (review.ts), which pushes nothing unreviewed unless the owner chose it.
import { ok, refused, type Call } from "./api.ts";

export interface EnvironmentHeld {
  name: string;
  /** Logins of its required reviewers. */
  reviewers: string[];
  /** The branches its policies allow; null: any branch. */
  branches: string[] | null;
}

/**
 * Creates or updates `name`, limited to the branches of its policies, with `reviewer` when given:
 * what the plan allowed (GitHub refuses what the plan lacks; its exact status is not documented).
 */
export async function createEnvironment(
  call: Call,
  base: string,
  name: string,
  reviewer: number | undefined,
): Promise<"created" | "unreviewed" | "none"> {
  const put = (reviewers: Array<{ type: "User"; id: number }>) =>
    call("PUT", `${base}/environments/${name}`, {
      ...(reviewers.length > 0 ? { reviewers } : {}),
      deployment_branch_policy: { protected_branches: false, custom_branch_policies: true },
    });
  if (reviewer !== undefined && isOk(await put([{ type: "User", id: reviewer }]))) return "created";
  const plain = await put([]);
  if (isOk(plain)) return reviewer === undefined ? "created" : "unreviewed";
  if (plain.status === 422 || plain.status === 403 || plain.status === 404) return "none";
  throw refused("PUT", `${base}/environments/${name}`, plain);
}

const policiesOf = (base: string, name: string) => `${base}/environments/${name}/deployment-branch-policies`;

/** The branches `name`'s policies allow. */
async function branchesOf(call: Call, base: string, name: string): Promise<string[]> {
  const { branch_policies } = await ok<{ branch_policies: Array<{ name: string }> }>(
    call,
    "GET",
    policiesOf(base, name),
  );
  return branch_policies.map((policy) => policy.name);
}

/** Adds `branch` to the branches `name` allows, unless it is there. */
export async function limitToBranch(call: Call, base: string, name: string, branch: string): Promise<void> {
  if (!(await branchesOf(call, base, name)).includes(branch))
    await ok(call, "POST", policiesOf(base, name), { name: branch, type: "branch" });
}

const isOk = (answer: { status: number }) => answer.status >= 200 && answer.status < 300;

/** An environment as GitHub holds it: its reviewers' logins and the branches allowed; null when there is none. */
export async function readEnvironment(
  call: Call,
  base: string,
  name: string,
): Promise<EnvironmentHeld | null> {
  const path = `${base}/environments/${name}`;
  const answer = await call<{
    protection_rules: Array<{ type: string; reviewers?: Array<{ reviewer: { login: string } }> }>;
    deployment_branch_policy: { custom_branch_policies: boolean } | null;
  }>("GET", path);
  if (answer.status === 404) return null;
  if (answer.status !== 200) throw refused("GET", path, answer);
  const environment = answer.body;
  const reviewers = environment.protection_rules
    .filter((rule) => rule.type === "required_reviewers")
    .flatMap((rule) => rule.reviewers?.map(({ reviewer }) => reviewer.login) ?? []);
  const branches = environment.deployment_branch_policy?.custom_branch_policies
    ? await branchesOf(call, base, name)
    : null;
  return { name, reviewers, branches };
}
