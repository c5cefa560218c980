// `npm start` as a process: where it listens, and what it does when its port is taken. Each
// test runs it on a port of its own with a stand-in build, configured for a Supabase project
// elsewhere, so no local Supabase starts.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { npmScriptArgs } from "../../tools/npm-script.ts";
import { freePorts } from "../../tools/processes.ts";

const root = mkdtempSync(join(tmpdir(), "npm-start-"));
const dist = join(root, "dist");
afterAll(() => rmSync(root, { recursive: true, force: true }));

const stops: Array<() => void> = [];
afterEach(() => stops.splice(0).forEach((stop) => stop()));

interface Started {
  port: number;
  output: () => string;
  exited: Promise<number | null>;
}

/** `npm start` with these settings; resolves once it serves, or once it exits. */
async function start(settings: Record<string, string>, args: string[]): Promise<Started> {
  const [port] = freePorts(1) as [number];
  const child = spawn(process.execPath, [...npmScriptArgs("start"), ...args], {
    env: {
      ...process.env,
      PORT: String(port),
      PUBLIC_SUPABASE_URL: "https://project-ref.supabase.co",
      ...settings,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  stops.push(() => child.kill("SIGKILL"));
  let output = "";
  const ready = new Promise<void>((resolve) => {
    const read = (chunk: Buffer) => {
      output += chunk;
      if (output.includes("Site:")) resolve();
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  await Promise.race([ready, exited]);
  return { port, output: () => output, exited };
}

/** Whether a TCP connection to `host:port` is accepted. */
function accepts(host: string, port: number): Promise<boolean> {
  return fetch(`http://${host}:${port}/`).then(
    () => true,
    () => false,
  );
}

describe.runIf(process.platform === "linux")("where it listens", () => {
  // Linux routes all of 127.0.0.0/8 to the loopback: a server bound to every interface accepts
  // 127.0.0.2, one bound to 127.0.0.1 refuses it, as it refuses the machine's network addresses.

  it("serves this machine only, by default", async () => {
    writeFileSync(join(root, "index.html"), "<p>home</p>");
    const { port } = await start({ HOST: "" }, ["--no-build", "--dist", root]);
    expect(await accepts("127.0.0.1", port)).toBe(true);
    expect(await accepts("127.0.0.2", port)).toBe(false);
  });

  it("serves every interface when HOST says so", async () => {
    writeFileSync(join(root, "index.html"), "<p>home</p>");
    const { port } = await start({ HOST: "0.0.0.0" }, ["--no-build", "--dist", root]);
    expect(await accepts("127.0.0.2", port)).toBe(true);
  });
});

describe("a site port already taken", () => {
  let taken: Server;
  afterEach(() => new Promise((closed) => taken.close(closed)));

  it("stops it at once, before building, and says which setting moves it", async () => {
    taken = createServer();
    const [port] = freePorts(1) as [number];
    await new Promise<void>((listening) => taken.listen(port, "127.0.0.1", listening));

    const started = await start({ PORT: String(port) }, ["--dist", dist]);
    expect(await started.exited).toBe(1);
    expect(started.output()).toContain(`Port ${port} is taken`);
    expect(started.output()).toContain("Set PORT");
    expect(started.output()).not.toContain("EADDRINUSE");
    // Nothing was built.
    expect(existsSync(dist)).toBe(false);
  });
});

describe("npm run preview with no build", () => {
  it("stops at once, naming what to run, rather than serving Not found", async () => {
    const empty = mkdtempSync(join(root, "no-build-"));
    const started = await start({}, ["--no-build", "--dist", empty]);
    expect(await started.exited).toBe(1);
    expect(started.output()).toContain("No build in");
    expect(started.output()).toContain("npm run build");
  });
});
