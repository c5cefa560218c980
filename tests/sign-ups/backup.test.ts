// `npm run sign-ups -- backup -o <file>`: the export, encrypted to the owner's age public key as it
// is written (age-encryption, by age's author). Decrypted with the matching identity, it is the
// export, byte for byte; without the identity it reads as nothing, and no clear copy is left beside it.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Decrypter, generateIdentity, identityToRecipient } from "age-encryption";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalSupabase, type LocalSupabase } from "../../tools/local-supabase/index.ts";
import { runNpmScript } from "../../tools/npm-script.ts";
import { withoutTestEnvironment } from "../test-environment.ts";
import { openTestDatabase } from "../support/database.ts";

const root = mkdtempSync(join(tmpdir(), "backup-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Three sign-ups, one with a phone (which the export guards with a leading '), one at a disposable domain. */
const SEED = `
  insert into public.early_access (email, phone, created_at) values
    ('ada@example.com', '+44 20 7946 0000', '2026-11-25T17:00:00Z'),
    ('xk3j2@mailinator.com', null, '2026-11-23T09:00:00Z'),
    ('bob@example.com', null, '2026-11-15T09:00:00Z');`;

describe("backup", () => {
  let backend: LocalSupabase;
  let identity: string;
  let recipient: string;
  beforeAll(async () => {
    const { database, owner } = await openTestDatabase();
    await owner.exec(SEED);
    backend = await startLocalSupabase({ database, port: 0, log: () => {} });
    identity = await generateIdentity();
    recipient = await identityToRecipient(identity);
  });
  afterAll(() => backend?.close());

  /** The owner's command against the project, as a job runs it. */
  const command = (args: string[], settings: Record<string, string> = {}) =>
    runNpmScript("sign-ups", args, {
      env: {
        ...withoutTestEnvironment(process.env),
        PUBLIC_SUPABASE_URL: backend.url.replace("127.0.0.1", "localhost"),
        SUPABASE_SECRET_KEY: backend.secretKey,
        SUPABASE_API_PORT: "",
        SUPABASE_DATA_DIR: join(root, "untouched"),
        SUPABASE_DB_URL: "",
        SUPABASE_SEED_FILE: "",
        BACKUP_PUBLIC_KEY: "",
        TZ: "UTC",
        ...settings,
      },
    });

  it("decrypted with the owner's identity, gives the export back; nothing else is written", async () => {
    const folder = mkdtempSync(join(root, "out-"));
    const file = join(folder, "sign-ups.csv.age");
    const run = await command(["backup", "-o", file], { BACKUP_PUBLIC_KEY: recipient });
    expect(run, run.stderr).toMatchObject({ status: 0, stdout: "" });
    expect(run.stderr).toBe(
      `Backed up 3 sign-ups to ${file}, encrypted to ${recipient.slice(0, 12)}…: only the holder of its private ` +
        "key can read it (age -d -i key.txt).\n",
    );
    const encrypted = readFileSync(file);
    expect(encrypted.subarray(0, 22).toString(), "an age file").toBe("age-encryption.org/v1\n");
    expect(encrypted.includes("ada@example.com"), "no address in the clear").toBe(false);
    expect(readdirSync(folder), "no clear copy, no partial file").toEqual(["sign-ups.csv.age"]);
    expect(statSync(file).mode & 0o777, "readable by its owner only").toBe(0o600);

    const decrypter = new Decrypter();
    decrypter.addIdentity(identity);
    const exported = await command(["export"]);
    expect(exported.status, exported.stderr).toBe(0);
    expect(await decrypter.decrypt(encrypted, "text")).toBe(exported.stdout);
    expect(exported.stdout).toContain('"\'+44 20 7946 0000"');
  });

  it("--to takes the key instead of BACKUP_PUBLIC_KEY", async () => {
    const file = join(root, "to.age");
    const run = await command(["backup", "-o", file, "--to", recipient]);
    expect(run.status, run.stderr).toBe(0);
    const decrypter = new Decrypter();
    decrypter.addIdentity(identity);
    expect(await decrypter.decrypt(readFileSync(file), "text")).toMatch(/^"email","phone",/);
  });

  it.each([
    {
      case: "without a key: says how to give one, writes nothing",
      settings: {} as Record<string, string>,
      stderr: /^error: backup takes an age public key: BACKUP_PUBLIC_KEY or --to age1…/,
    },
    {
      case: "with something else than an age public key (the private one, say): refuses it, writes nothing",
      settings: { BACKUP_PUBLIC_KEY: "AGE-SECRET-KEY-1QQQQ" },
      stderr: /^error: BACKUP_PUBLIC_KEY is not an age public key \(age1… as age-keygen prints it\)/,
    },
  ])("$case", async ({ settings, stderr }) => {
    const folder = mkdtempSync(join(root, "refused-"));
    const run = await command(["backup", "-o", join(folder, "x.age")], settings);
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(stderr);
    expect(readdirSync(folder)).toEqual([]);
  });

  it("under GitHub Actions, without a key: an ::error:: annotation, as every failure", async () => {
    const run = await command(["backup", "-o", join(root, "x.age")], { GITHUB_ACTIONS: "true" });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(
      /^::error title=Wrong arguments::backup takes an age public key: BACKUP_PUBLIC_KEY or --to age1…[^\n]*\n$/,
    );
  });

  it("a project that fails mid-way leaves no file", async () => {
    const folder = mkdtempSync(join(root, "failed-"));
    const run = await command(["backup", "-o", join(folder, "x.age")], {
      BACKUP_PUBLIC_KEY: recipient,
      SUPABASE_SECRET_KEY: "sb_secret_rotated",
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toMatch(/^error: The API at .+ refused the key from SUPABASE_SECRET_KEY as invalid/);
    expect(readdirSync(folder)).toEqual([]);
  });
});
