import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    projects: [
      { test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      // Paid providers through their real SDKs against a loopback fake: batching, retries, faults, the key never leaking.
      { test: { name: 'providers', include: ['test/providers/**/*.test.ts'], testTimeout: 30_000 } },
      // The seam's types: the declarations napi-rs generates from Rust against the zod contracts (tsc, no addon needed).
      {
        test: {
          name: 'types',
          include: [],
          typecheck: { enabled: true, only: true, include: ['test/types/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
        },
      },
      // Native suites spawn the CLI and index real corpora: give them room on a 2-core machine.
      { test: { name: 'native', include: ['test/native/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 } },
      // Agent surfaces: MCP over stdio and Streamable HTTP, the HTTP API and the daemon, through real clients.
      { test: { name: 'surfaces', include: ['test/surfaces/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 } },
      // Hostile input and crashes: a generated corpus under both profiles, kill -9 loops over add, serve, compaction, backup and restore.
      { test: { name: 'hostile', include: ['test/hostile/**/*.test.ts'], testTimeout: 600_000, hookTimeout: 120_000 } },
      { test: { name: 'eval', include: ['test/eval/**/*.test.ts'], testTimeout: 600_000, hookTimeout: 600_000 } },
      // The package as a user installs it: npm pack, install the tarballs into an empty temp dir (runtime
      // dependencies from the registry), then the CLI, MCP and the library from there.
      { test: { name: 'package', include: ['test/package/**/*.test.ts'], testTimeout: 300_000, hookTimeout: 300_000 } },
    ],
  },
})
