// The hosts `npm run deploy -- --host <name>` uploads to, by name.
import { cloudflare } from "./cloudflare.ts";
import type { Host } from "./host.ts";
import { netlify } from "./netlify.ts";
import { vercel } from "./vercel.ts";

export type { Host };

export const HOSTS: Record<string, Host> = Object.fromEntries(
  [cloudflare, netlify, vercel].map((host) => [host.name, host]),
);
