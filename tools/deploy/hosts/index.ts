// The hosts `npm run deploy -- --host <name>` uploads to, by name.
import type { Host } from "./host.ts";

export type { Host };

export const HOSTS: Record<string, Host> = {};
