// One YAML file as one content entry, named after the file. Astro's own file() loader reads a file
// as a list of entries of one shape, and only logs a file it cannot parse (the build then goes on
// without it); this one stops the build and says where the file is broken.
import { readFileSync } from "node:fs";
import { basename, extname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Loader } from "astro/loaders";
import yaml from "js-yaml";

/** The YAML file at `path` (relative to the project), as plain data. */
export function readYamlDocument(path: string, root = process.cwd()): unknown {
  const text = readFileSync(resolve(root, path), "utf8");
  // YAML 1.2's core schema: a date stays text, for the schema to check (js-yaml's default would
  // turn it into a Date, and February 30 into March 1). js-yaml's errors name the file, the line
  // and the column, and show the line.
  return yaml.load(text, { filename: path, schema: yaml.CORE_SCHEMA });
}

/** A loader of the one entry that the YAML file at `path` holds. */
export function yamlDocument(path: string): Loader {
  const id = basename(path, extname(path));
  return {
    name: "yaml-document",
    load: async ({ config, store, parseData, watcher, logger }) => {
      const root = fileURLToPath(config.root);
      const sync = async () => {
        const data = readYamlDocument(path, root) as Record<string, unknown>;
        store.set({ id, data: await parseData({ id, data, filePath: path }), filePath: path });
      };
      await sync();
      // `npm run dev` shows an edit at once.
      const file = resolve(root, path);
      watcher?.add(file);
      watcher?.on("change", async (changed) => {
        if (changed !== file) return;
        logger.info(`Reloading ${path}`);
        await sync().catch((error: Error) => logger.error(error.message));
      });
    },
  };
}
