// bench:flood's flooding client: a script's flood from one /24, on a pool and an event loop of
// its own, as a script elsewhere would be, so that the visitors beside it are measured against
// the database they share with it rather than queued behind its answers in one process.
import { once } from "node:events";
import { isMainThread, parentPort, Worker, workerData } from "node:worker_threads";
import { connectPool } from "../tools/local-supabase/database/pool.ts";
import { createPostgrest } from "../tools/local-supabase/postgrest.ts";
import { paced, random, warm, type Answer, type Pace } from "./sign-up-requests.ts";

interface FloodOptions {
  /** The API role's connection URL. */
  url: string;
  /** The /24 the flood comes from, as its first three numbers: `198.19.7`. */
  network: string;
  pace: Pace;
  /** The /24 whose sign-ups open the pool's connections first, and make their plans. */
  warmFrom: string;
}

/** A flooding client, its connections opened: `flood()` runs it and resolves with its answers. */
export async function floodingClient(options: FloodOptions): Promise<{ flood: () => Promise<Answer[]> }> {
  const worker = new Worker(new URL(import.meta.url), { workerData: options });
  await once(worker, "message");
  return {
    flood: async () => {
      worker.postMessage("go");
      const [answers] = (await once(worker, "message")) as [Answer[]];
      await once(worker, "exit");
      return answers;
    },
  };
}

if (!isMainThread) {
  const { url, network, pace, warmFrom } = workerData as FloodOptions;
  const database = connectPool({ url, poolSize: pace.connections });
  const { handle } = await createPostgrest(database);
  await warm(handle, pace.connections, () => `${warmFrom}.${1 + random(254)}`);
  parentPort!.postMessage("ready");
  await once(parentPort!, "message");
  parentPort!.postMessage(await paced(handle, () => `${network}.${1 + random(254)}`, pace));
  await database.close();
}
