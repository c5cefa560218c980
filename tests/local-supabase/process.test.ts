// `npm run backend` as a process, the way people run it next to `npm start` or `npm run dev`:
// one owner per data folder, a start after a kill that left the folder's PostgreSQL server
// running or crashed with nothing acknowledged lost, a clean stop on every signal that ends a
// terminal session, as root and as an ordinary user, and no memory kept by clients that hang
// up mid-upload.
import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, afterEach, describe, expect, inject, it } from "vitest";
import { connectPool } from "../../tools/local-supabase/database/pool.ts";
import { LOCAL_PUBLISHABLE_KEY } from "../../config/local-supabase.ts";
import { npmScriptArgs } from "../../tools/npm-script.ts";
import { freePorts } from "../../tools/processes.ts";
import { LOCK_FILE } from "../../tools/local-supabase/database/data-folder.ts";
import { CLUSTER_FOLDER } from "../../tools/local-supabase/database/local-database.ts";
import {
  isRunning,
  LIFT_SIGN_UP_LIMITS_FILE,
  listedEmails,
  signUpOverHttp,
  testServerUrl,
  uniqueEmail,
} from "../support/database.ts";

const root = mkdtempSync(join(tmpdir(), "early-access-process-"));
// As root, PostgreSQL runs as the postgres user, who must pass through to the data folders.
chmodSync(root, 0o711);
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Running {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<number | null>;
}

const running: Running[] = [];
afterEach(async () => {
  for (const { child, exited } of running.splice(0)) {
    child.kill("SIGINT");
    await exited;
  }
});

/**
 * Runs `npm run backend` on `dataDir` in a process group of its own, as a terminal runs it
 * (as another user, given `user`); resolves once it answers, or once it exits.
 */
async function startBackendProcess(
  dataDir: string,
  {
    nodeFlags = [],
    user,
    env = {},
  }: { nodeFlags?: string[]; user?: { uid: number; gid: number }; env?: Record<string, string> } = {},
): Promise<Running> {
  const [port] = freePorts(1) as [number];
  const child = spawn(process.execPath, [...nodeFlags, ...npmScriptArgs("backend")], {
    detached: true,
    ...user,
    env: {
      ...process.env,
      SUPABASE_DATA_DIR: dataDir,
      SUPABASE_API_PORT: String(port),
      PUBLIC_SUPABASE_URL: `http://127.0.0.1:${port}`,
      SUPABASE_SEED_FILE: LIFT_SIGN_UP_LIMITS_FILE,
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.unref();
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const process_: Running = { child, url: `http://127.0.0.1:${port}`, output: () => output, exited };
  running.push(process_);
  const ready = new Promise<void>((resolve) =>
    child.stdout!.on("data", () => output.includes("API:") && resolve()),
  );
  await Promise.race([ready, exited]);
  return process_;
}

/** The PID of the PostgreSQL server running on a data folder's cluster, from its postmaster.pid; null when none runs. */
function serverOf(dataDir: string): number | null {
  try {
    const pid = Number(readFileSync(join(dataDir, CLUSTER_FOLDER, "postmaster.pid"), "utf8").split("\n")[0]);
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

/** Stops a backend with `signal`; how long it took to exit, cleanly (in ms). */
async function timedStop(backend: Running, signal: NodeJS.Signals): Promise<number> {
  const started = performance.now();
  backend.child.kill(signal);
  const status = await backend.exited;
  // Read after the wait it measures.
  const took = Math.round(performance.now() - started);
  expect(status, backend.output()).toBe(0);
  return took;
}

/** Kills a process group outright, and waits until its leader is gone. */
async function killGroup(pid: number): Promise<void> {
  process.kill(-pid, "SIGKILL");
  while (isRunning(pid)) await new Promise((resume) => setTimeout(resume, 20));
}

/**
 * What a second backend would change if it touched a data folder: the names in the folder and
 * in its cluster's, and the files that say who holds the folder and how its cluster runs (the
 * lock, postmaster.pid, the settings), with their sizes and times. The running server's own
 * writes (its WAL, its log) are the first backend's doing, and are left out.
 */
function snapshot(dataDir: string): string[] {
  const cluster = join(dataDir, CLUSTER_FOLDER);
  const watched = [
    join(dataDir, LOCK_FILE),
    ...["postmaster.pid", "postmaster.opts", "PG_VERSION", "postgresql.conf", "pg_hba.conf"].map((file) =>
      join(cluster, file),
    ),
  ];
  return [
    ...readdirSync(dataDir).sort(),
    ...readdirSync(cluster).sort(),
    ...watched.map((file) => {
      const info = statSync(file);
      return `${file} ${info.size} ${info.mtimeMs}`;
    }),
  ];
}

/** Starts an upload that announces a body it never finishes sending. */
function halfSentUpload(url: string) {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on("error", () => {});
  socket.write(
    "POST /rest/v1/early_access HTTP/1.1\r\nHost: h\r\n" +
      `apikey: ${LOCAL_PUBLISHABLE_KEY}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"email":`,
  );
  return socket;
}

describe("a data folder", () => {
  it("has one owner: a second process is refused, naming the first, having touched nothing", async () => {
    const dataDir = join(root, "shared");
    const first = await startBackendProcess(dataDir);
    const before = snapshot(dataDir);

    for (const spelling of [dataDir, `${dataDir}/`, `file://${dataDir}`, relative(process.cwd(), dataDir)]) {
      const second = await startBackendProcess(spelling);
      expect(await second.exited, second.output()).toBe(1);
      expect(second.output()).toContain(`The data folder ${dataDir} is in use by process ${first.child.pid}`);
    }
    expect(snapshot(dataDir), "the second process touched nothing").toEqual(before);
  });

  it("starts again after Node alone was killed, stopping the server it left running, and keeps every sign-up", async () => {
    const dataDir = join(root, "node-killed");
    const first = await startBackendProcess(dataDir);
    const emails = Array.from({ length: 50 }, (_, index) => uniqueEmail(`kept${index}`));
    for (const email of emails) expect((await signUpOverHttp(first, email)).status).toBe(201);
    const orphan = serverOf(dataDir)!;
    // The whole process group of the command: PostgreSQL runs in a group of its own, and stays.
    await killGroup(first.child.pid!);
    expect(isRunning(orphan), "the server outlived its backend").toBe(true);

    const restarted = await startBackendProcess(dataDir);
    expect(restarted.output()).toContain("API:");
    expect(isRunning(orphan), "the orphaned server was stopped, not duplicated").toBe(false);
    expect(serverOf(dataDir)).not.toBe(orphan);
    // A fresh clone's run once saw this read refused (ECONNREFUSED) after "API:": should it fail
    // again, it says what the restarted backend printed, and whether it still runs.
    const listed = await listedEmails(restarted).catch((error: unknown) => {
      throw new Error(
        `the restarted backend (exit: ${restarted.child.exitCode}) refused the read: ${String(error)}\n${restarted.output()}`,
      );
    });
    expect(listed).toEqual(expect.arrayContaining(emails));
  });

  it("starts again after every process was killed, the server mid-work, and keeps every acknowledged sign-up", async () => {
    const dataDir = join(root, "all-killed");
    const first = await startBackendProcess(dataDir);
    const acknowledged: string[] = [];
    // Sends until the kill ends it, and says what ended it.
    const sending = (async () => {
      for (let index = 0; ; index++) {
        const email = uniqueEmail(`crash${index}`);
        const response = await signUpOverHttp(first, email).catch((error: unknown) => error);
        if (!(response instanceof Response) || response.status !== 201) {
          return response instanceof Response
            ? `${response.status} ${await response.text()}`
            : String(response);
        }
        acknowledged.push(email);
      }
    })();
    let ended: string | undefined;
    void sending.then((why) => (ended = why));
    while (acknowledged.length < 30 && ended === undefined)
      await new Promise((resume) => setTimeout(resume, 10));
    expect(ended, `sign-ups stopped before the kill, after ${acknowledged.length}`).toBeUndefined();
    const server = serverOf(dataDir)!;
    await Promise.all([killGroup(server), killGroup(first.child.pid!)]);
    await sending;

    const restarted = await startBackendProcess(dataDir);
    expect(restarted.output()).toContain("API:");
    expect(await listedEmails(restarted)).toEqual(expect.arrayContaining(acknowledged));
  });
});

describe.runIf(process.getuid?.() === 0)("an ordinary user", () => {
  it("runs the backend on a folder of their own, as root does", async () => {
    const nobody = { uid: 65534, gid: 65534 };
    const dataDir = join(root, "ordinary");
    mkdirSync(dataDir);
    chownSync(dataDir, nobody.uid, nobody.gid);
    const backend = await startBackendProcess(dataDir, { user: nobody });
    expect(backend.output()).toContain("API:");
    const email = uniqueEmail("ordinary");
    expect((await signUpOverHttp(backend, email)).status).toBe(201);
    const owner = spawnSync("ps", ["-o", "user=", "-p", String(serverOf(dataDir))], { encoding: "utf8" });
    expect(owner.stdout.trim()).toBe("nobody");
    backend.child.kill("SIGINT");
    expect(await backend.exited).toBe(0);
  });
});

describe("SUPABASE_DB_URL", () => {
  it("points the backend at another PostgreSQL set up as a Supabase project, with no server of its own", async () => {
    // The run's server, where a copy of the migrated template stands in for that project.
    const { host, port, template } = inject("postgres");
    const name = `elsewhere_${process.pid}`;
    const cluster = connectPool({ url: testServerUrl("postgres", "postgres"), poolSize: 1 });
    await cluster
      .exec(`create database ${name} template ${template} owner postgres`)
      .finally(() => cluster.close());
    const dataDir = join(root, "unused");

    const backend = await startBackendProcess(dataDir, {
      env: { SUPABASE_DB_URL: testServerUrl("authenticator", name) },
    });
    expect(backend.output()).toContain(`Data:  PostgreSQL at ${host}:${port}`);
    const email = uniqueEmail("elsewhere");
    expect((await signUpOverHttp(backend, email)).status).toBe(201);
    expect(await listedEmails(backend)).toContain(email);
    expect(existsSync(dataDir), "no data folder, no server of its own").toBe(false);
  });
});

describe("a stop signal", () => {
  it.each(["SIGINT", "SIGTERM", "SIGHUP"] as const)(
    "%s stops the server cleanly, waiting for no client: connected ones and an upload half sent",
    async (signal) => {
      const dataDir = join(root, signal);
      const backend = await startBackendProcess(dataDir);
      const email = uniqueEmail(signal.toLowerCase());
      expect((await signUpOverHttp(backend, email)).status).toBe(201);
      const idle = connect(Number(new URL(backend.url).port), "127.0.0.1").on("error", () => {});
      const upload = halfSentUpload(backend.url);

      const withClients = await timedStop(backend, signal);
      expect(existsSync(join(dataDir, LOCK_FILE)), "the lock is released").toBe(false);
      expect(serverOf(dataDir), "the server is stopped").toBeNull();
      idle.destroy();
      upload.destroy();

      const restarted = await startBackendProcess(dataDir);
      expect(await listedEmails(restarted)).toContain(email);
      // Not waiting for the clients: the half-sent upload alone would hold the stop for the
      // server's request timeout (60 s). Against a baseline of this run, the same stop with no
      // client: on a busy machine a stop with clients took 12.6 s while one alone took 0.1 s
      // (load average 7 on 2 cores), so the bound is half that timeout above the baseline.
      const alone = await timedStop(restarted, signal);
      expect(withClients, `with clients ${withClients} ms, alone ${alone} ms`).toBeLessThan(alone + 30_000);
    },
    90_000,
  );
});

describe("clients that hang up mid-upload", () => {
  it("leave nothing behind: memory stays flat across 25,000 of them", async () => {
    // A JavaScript heap capped well below what 25,000 retained requests would take (the leak
    // this guards against held ~280 MB): it must get by, collecting as it goes.
    const backend = await startBackendProcess("memory://", {
      nodeFlags: ["--max-old-space-size=96", "--max-semi-space-size=2"],
    });
    const rssMb = () =>
      Number(execFileSync("ps", ["-o", "rss=", "-p", String(backend.child.pid)], { encoding: "utf8" })) /
      1024;
    const hangUps = async (count: number) => {
      for (let done = 0; done < count; done += 250) {
        await Promise.all(
          Array.from(
            { length: 250 },
            () =>
              new Promise<void>((resolve) => {
                const socket = halfSentUpload(backend.url);
                // A reset, as a client that vanishes sends: no lingering TIME_WAIT on our side.
                setImmediate(() => {
                  socket.resetAndDestroy();
                  resolve();
                });
              }),
          ),
        );
      }
    };
    // Warm-up: the heap first grows to its working size, then stays there.
    await hangUps(5_000);
    const before = rssMb();
    await hangUps(25_000);

    // The leak held ~280 MB; what the allocator keeps after collecting varies with the machine's
    // load (up to ~60 MB seen while other suites ran), so the bound sits between the two. The
    // server may still be dropping the last sockets: the growth is read until it is within the
    // bound, for up to 30 s on a busy machine (a few on a quiet one).
    await expect.poll(() => rssMb() - before, { timeout: 30_000, interval: 100 }).toBeLessThan(120);
    expect((await signUpOverHttp(backend, uniqueEmail("after-hang-ups"))).status).toBe(201);
    backend.child.kill("SIGINT");
    expect(await backend.exited).toBe(0);
  }, 120_000);
});
